"""The admin's table commands, decided against the table book (ADR 018).

The wallet decides them because it is the service that admits bets against a table: it owns the
book's writes, so a table event is published in the same transaction as the admin command's
offset (exactly once). All of one table's commands share its partition (keyed by ``table_id``),
so one instance decides them in order; the book it decides against is the whole log replayed at
the assignment plus its own events, so ``expected_version`` is checked against the latest
version (a stale command is refused, never applied twice).
"""

from __future__ import annotations

import hashlib
import json

from holdem.core.chips import ChipSetError, check_chips
from holdem.core.contracts import (
    ChangeTable,
    CloseTable,
    CreateTable,
    Envelope,
    Reason,
    TableChanged,
    TableClosed,
    TableCommand,
    TableEvent,
    TableOpened,
    TableRejected,
    TableTerms,
)
from holdem.core.currencies import CURRENCIES, Currencies
from holdem.core.decider import Context
from holdem.core.rules import PAY_TABLES
from holdem.core.table_book import Table, TableBook

_ENVELOPE = {"event_id", "occurred_at", "causation_id", "correlation_id", "command_id"}


class TableRefusal(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


def table_fingerprint(command: TableCommand) -> str:
    """A digest of what an admin command asks for (not its envelope or id)."""
    body = command.model_dump(mode="json", exclude=_ENVELOPE)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def decide_table(
    book: TableBook, command: TableCommand, ctx: Context, currencies: Currencies = CURRENCIES
) -> list[Envelope]:
    """The table event an admin command makes, a rejection, or nothing (a resend);
    ``currencies``: the currency table a table's currency must be in (ADR 029)."""
    digest = table_fingerprint(command)
    seen = book.commands.get(command.table_id, {}).get(command.command_id)
    try:
        if seen == digest:
            return []  # this very command was applied: a resend changes nothing
        if seen is not None:
            raise TableRefusal(Reason.DUPLICATE, "command_id was used for another body")
        terms = getattr(command, "terms", None)
        if terms is not None and not currencies.known(terms.currency):
            raise TableRefusal(Reason.UNSUPPORTED_CURRENCY, f"no currency {terms.currency}")
        event = _apply(book.get(command.table_id), command, ctx, digest)
    except TableRefusal as refusal:
        return [
            TableRejected(
                **_envelope(command, ctx),
                command_type=str(getattr(command, "type", "")),
                reason=refusal.reason,
                detail=refusal.detail,
            )
        ]
    return [event]


def _apply(table: Table | None, command: TableCommand, ctx: Context, digest: str) -> TableEvent:
    fields = {**_envelope(command, ctx), "fingerprint": digest}
    if isinstance(command, CreateTable):
        if table is not None:
            raise TableRefusal(Reason.TABLE_EXISTS, f"table {command.table_id} exists")
        _check_terms(command.terms)
        return TableOpened(**fields, table_version=1, terms=command.terms)
    if table is None:
        raise TableRefusal(Reason.UNKNOWN_TABLE, f"no table {command.table_id}")
    if not table.open:
        raise TableRefusal(Reason.TABLE_CLOSED, f"table {command.table_id} is closed")
    expected = getattr(command, "expected_version", None)
    if expected != table.version:
        raise TableRefusal(
            Reason.STALE_VERSION, f"expected version {expected}, the table is at {table.version}"
        )
    if isinstance(command, ChangeTable):
        _check_terms(command.terms)
        if command.terms.operator_id != table.terms.operator_id:
            raise TableRefusal(Reason.INVALID, "a table's operator_id cannot change")
        return TableChanged(**fields, table_version=table.version + 1, terms=command.terms)
    assert isinstance(command, CloseTable)
    return TableClosed(**fields, table_version=table.version + 1, terms=table.terms)


def _check_terms(terms: TableTerms) -> None:
    if terms.pay_table not in PAY_TABLES:
        raise TableRefusal(Reason.INVALID, f"unknown pay table {terms.pay_table}")
    try:
        check_chips(terms.chips)
    except ChipSetError as error:
        raise TableRefusal(Reason.INVALID, str(error)) from None


def _envelope(command: TableCommand, ctx: Context) -> dict[str, object]:
    return {
        "event_id": ctx.next_id(),
        "table_id": command.table_id,
        "command_id": command.command_id,
        "occurred_at": ctx.now,
        "causation_id": ctx.cause_id,
        "correlation_id": ctx.correlation_id or ctx.cause_id,
    }
