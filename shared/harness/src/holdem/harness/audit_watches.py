"""The audit's one-record-at-a-time checks, bundled: money, forced decks, blocking, tables,
sessions and event ids. The whole audit feeds them every record in log order; the streaming
audit (``audit_fold``) feeds them as it reads. Each holds bounded state (ADR 040)."""

from __future__ import annotations

from typing import Any

from holdem.core.contracts.wallet import WalletEvent
from holdem.harness.audit_forced import ForcedWatch
from holdem.harness.audit_money import MoneyWatch
from holdem.harness.audit_protection import BlockWatch
from holdem.harness.audit_sessions import SessionWatch
from holdem.harness.audit_tables import TableWatch
from holdem.harness.audit_window import KEPT, Window

# Written by someone else than the services (the operator's clients, the admin, the operator's
# wallet): their operator header is optional (ADR 021), every other record's is not.
WRITTEN_OUTSIDE = ("commands", "queries", "admin", "seamless_replies")


class EventIdWatch:
    """No two records the services wrote share an ``event_id``, on any topics (an operator that
    de-duplicates on it would drop one): an exact window of the latest ids."""

    def __init__(self, kept: int = KEPT) -> None:
        self.seen: Window[str, str] = Window(kept)
        self.found: list[str] = []

    def feed(self, record: Any) -> None:
        event_id = getattr(record.message, "event_id", None)
        if record.role in WRITTEN_OUTSIDE or event_id is None:
            return
        where = f"{record.role}[{record.partition}]@{record.offset}"
        first = self.seen.get(event_id)
        if first is None:
            self.seen.put(event_id, where)
        elif first != where:
            self.found.append(f"event_id {event_id} on {first} and again on {where}")


class Watches:
    """Every one-record-at-a-time check; ``feed`` in each partition's order, then ``finish``."""

    def __init__(self, kept: int = KEPT) -> None:
        self.money = MoneyWatch(kept)
        self.forced = ForcedWatch()
        self.blocks = BlockWatch()
        self.tables = TableWatch()
        self.sessions = SessionWatch(kept)
        self.event_ids = EventIdWatch(kept)

    def feed(self, record: Any) -> None:
        m = record.message
        if m is None:
            return
        role = record.role
        if role == "wallet" and isinstance(m, WalletEvent):
            self.money.feed(m)
        elif role == "rounds":
            self.forced.feed(m)
            self.blocks.feed(m)
            self.sessions.feed(m)
        if role in ("rounds", "tables"):
            self.tables.feed(role, m)
        self.event_ids.feed(record)

    def finish(self) -> list[str]:
        """What every watch found (the money's conservation aside: it adds up the books of
        every partition, ``MoneyWatch.books``)."""
        return [
            *self.money.finish(),
            *self.tables.finish(),
            *self.sessions.finish(),
            *self.blocks.finish(),
            *self.forced.found,
            *self.event_ids.found,
        ]
