"""The table book: every table's latest version, folded from the ``holdem.tables`` log.

Small and bounded by the number of tables (an entry keeps its latest terms and its last
COMMANDS_KEPT accepted command ids). The fold is idempotent and order-safe: an event applies only
as the next version of its table, so reading one record twice (a replay overlapping the live
read, or a service's own event seen again) changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from holdem.core.contracts.tables import OffChips as ChipRule
from holdem.core.contracts.tables import (
    TableClosed,
    TableEvent,
    TableOpened,
    TableTerms,
)
from holdem.core.limits import OffChips, TableLimits

COMMANDS_KEPT: Final = 64  # accepted admin command ids remembered per table


@dataclass(frozen=True, slots=True)
class Table:
    """One table at one version."""

    table_id: str
    version: int
    terms: TableTerms
    open: bool = True

    @property
    def limits(self) -> TableLimits:
        terms = self.terms
        rule: OffChips = "adjust" if terms.off_chips is ChipRule.ADJUST else "reject"
        return TableLimits(terms.ante_min, terms.ante_max, terms.bonus_max, terms.chips, rule)


@dataclass(slots=True)
class TableBook:
    """Tables by id, and the admin commands each accepted (id -> fingerprint of the body)."""

    tables: dict[str, Table] = field(default_factory=dict)
    commands: dict[str, dict[str, str]] = field(default_factory=dict)

    def get(self, table_id: str) -> Table | None:
        return self.tables.get(table_id)

    def evolve(self, event: object) -> None:
        """Fold one record of the tables topic (rejections and anything else: no change)."""
        if not isinstance(event, TableEvent):
            return
        current = self.tables.get(event.table_id)
        expected = 1 if current is None else current.version + 1
        if event.table_version != expected or (isinstance(event, TableOpened) != (current is None)):
            return  # already folded, or not the next version of this table
        if current is not None and not current.open:
            return  # a closed table stays closed
        is_open = not isinstance(event, TableClosed)
        self.tables[event.table_id] = Table(
            event.table_id, event.table_version, event.terms, is_open
        )
        seen = self.commands.setdefault(event.table_id, {})
        seen[event.command_id] = event.fingerprint
        while len(seen) > COMMANDS_KEPT:
            del seen[next(iter(seen))]
