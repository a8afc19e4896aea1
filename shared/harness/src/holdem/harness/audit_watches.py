"""The audit's one-record-at-a-time checks, bundled: money, forced decks, blocking, tables,
sessions and event ids. The whole audit feeds them every record in log order; the streaming
audit (``audit_fold``) feeds them as it reads. Each holds bounded state (ADR 040)."""

from __future__ import annotations

from typing import Any

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
        # event id -> where it was first: (topic, partition, offset)
        self.seen: Window[str, tuple[str, int, int]] = Window(kept)
        self.found: list[str] = []

    def feed(self, record: Any) -> None:
        event_id = getattr(record.message, "event_id", None)
        if record.role in WRITTEN_OUTSIDE or event_id is None:
            return
        # Where it was, as a tuple: the text is made only for a finding (most records have none).
        where = (record.role, record.partition, record.offset)
        first = self.seen.first(event_id, where)
        if first is not None and first != where:
            self.found.append(f"event_id {event_id} on {_at(*first)} and again on {_at(*where)}")


def _at(role: str, partition: int, offset: int) -> str:
    return f"{role}[{partition}]@{offset}"


# The watches ``Watches.feed`` hands a message to, by its topic and type, worked out once per
# (topic, type) from each watch's ``READS`` (an ``isinstance`` that misses a pydantic model
# costs a few hundred ns; a rounds record went through about fifteen of them).
_ROUTES: dict[tuple[str, type], tuple[str, ...]] = {}


def route(role: str, cls: type) -> tuple[str, ...]:
    """The names of the watches (``Watches``' attributes) that act on a ``cls`` message read from
    topic ``role``, in the order ``Watches.feed`` has always fed them."""
    names = []
    if role == "wallet" and issubclass(cls, MoneyWatch.READS):
        names.append("money")
    elif role == "rounds":
        for name, watch in (("forced", ForcedWatch), ("blocks", BlockWatch)):
            if issubclass(cls, watch.READS):
                names.append(name)
        if issubclass(cls, SessionWatch.READS):
            names.append("sessions")
    if role in ("rounds", "tables") and issubclass(cls, TableWatch.READS):
        names.append("tables")
    return tuple(names)


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
        key = (role, type(m))
        names = _ROUTES.get(key)
        if names is None:
            names = _ROUTES[key] = route(*key)
        for name in names:  # the watches that act on it; the others would do nothing
            if name == "money":
                self.money.feed(m)
            elif name == "forced":
                self.forced.feed(m)
            elif name == "blocks":
                self.blocks.feed(m)
            elif name == "sessions":
                self.sessions.feed(m)
            else:
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
