"""The tables half of the audit (ADR 018): every table's versions in order, and every round bet
at a table played under the terms of the version it names."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from holdem.core.contracts import BetPlaced, TableClosed, TableEvent, TableOpened
from holdem.core.errors import RoundError
from holdem.core.limits import auto_adjust
from holdem.core.table_book import Table


def table_violations(records: Iterable[Any]) -> list[str]:
    """Broken table invariants, as sentences. ``records``: the audit's ``Record``s."""
    watch = TableWatch()
    for record in sorted(records, key=lambda r: (r.role, r.partition, r.offset)):
        watch.feed(record.role, record.message)
    return watch.finish()


class TableWatch:
    """The tables audit one record at a time: each table's versions in order (the tables topic,
    a table's versions on one partition), and each bet at a table against the version it names.
    A bet read before its version (two topics) waits for it; ``finish`` judges those left."""

    # The types ``feed`` acts on (see ForcedWatch.READS).
    READS: tuple[type, ...] = (TableEvent, BetPlaced)

    def __init__(self) -> None:
        self.versions: dict[tuple[str, int], TableEvent] = {}
        self.waiting: dict[tuple[str, int], list[BetPlaced]] = {}
        self.versions_found: list[str] = []  # the tables topic's own findings
        self.found: list[str] = []  # the bets'

    def feed(self, role: str, message: Any) -> None:
        if role == "tables" and isinstance(message, TableEvent):
            self._version(message)
        elif role == "rounds" and isinstance(message, BetPlaced) and message.table_id is not None:
            key = (message.table_id, message.table_version or 0)
            if key in self.versions:
                self._bet(message)
            else:
                self.waiting.setdefault(key, []).append(message)

    def _version(self, event: TableEvent) -> None:
        key = (event.table_id, event.table_version)
        versions, found = self.versions, self.versions_found
        if key in versions:
            found.append(f"table {event.table_id}: version {event.table_version} written twice")
        elif event.table_version > 1 and (event.table_id, event.table_version - 1) not in versions:
            found.append(f"table {event.table_id}: version {event.table_version} skips one")
        elif isinstance(event, TableOpened) != (event.table_version == 1):
            kind = type(event).__name__
            found.append(f"table {event.table_id}: {kind} as version {event.table_version}")
        elif event.table_version > 1 and isinstance(
            versions[(event.table_id, event.table_version - 1)], TableClosed
        ):
            found.append(f"table {event.table_id}: changed after it was closed")
        versions.setdefault(key, event)
        for bet in self.waiting.pop(key, []):
            self._bet(bet)

    def _bet(self, bet: BetPlaced) -> None:
        name = f"{bet.player_id}/{bet.round_id}"
        self.found += [f"{name}: {v}" for v in _bet_violations(bet, self.versions)]

    def finish(self) -> list[str]:
        for bets in self.waiting.values():
            for bet in bets:
                self._bet(bet)
        self.waiting.clear()
        return self.versions_found + self.found


def _bet_violations(bet: BetPlaced, versions: dict[tuple[str, int], TableEvent]) -> Iterator[str]:
    assert bet.table_id is not None
    event = versions.get((bet.table_id, bet.table_version or 0))
    if event is None:
        yield f"bet at table {bet.table_id} version {bet.table_version}, never written"
        return
    if isinstance(event, TableClosed):
        yield f"bet at table {bet.table_id} after it was closed"
    terms = event.terms
    carried = (bet.decision_timeout_s, bet.timeout_policy, bet.pay_table, bet.currency, bet.mode)
    due = (terms.decision_timeout_s, terms.timeout_policy, terms.pay_table, terms.currency)
    if carried != (*due, terms.mode):
        yield f"terms {carried} are not those of table version {event.table_version}"
    limits = Table(event.table_id, event.table_version, terms).limits
    try:
        allowed = auto_adjust(bet.requested_ante, bet.requested_aa_bonus, limits)
    except RoundError as error:
        yield f"the table version it names refuses the bets asked: {error}"
        return
    if (allowed.ante, allowed.aa_bonus) != (bet.ante, bet.aa_bonus):
        yield f"bets {(bet.ante, bet.aa_bonus)} are not what the table allows {allowed}"
