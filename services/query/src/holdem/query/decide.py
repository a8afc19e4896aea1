"""The query service's answers: one reply per query, keyed by its requester; a refusal says why.

Pure: the replies depend on the folded state, the table book (a history's length is its
table's) and the query only."""

from __future__ import annotations

from typing import Any

from holdem.core.contracts import (
    BalanceQuery,
    BalanceReply,
    HistoryQuery,
    HistoryReply,
    Message,
    Mode,
    OpenRoundQuery,
    OpenRoundReply,
    PromotionsQuery,
    PromotionsReply,
    ProtectionQuery,
    ProtectionReply,
    QueryReason,
    QueryRefused,
    RoundSummaryQuery,
    RoundSummaryReply,
)
from holdem.core.contracts.queries import (
    HISTORY_DEFAULT,
    BalanceLine,
    CampaignView,
    Query,
    RoundView,
)
from holdem.core.decider import Context
from holdem.core.summary import render
from holdem.core.table_book import TableBook
from holdem.query.state import Book, QueryState


class Refusal(Exception):
    def __init__(self, reason: QueryReason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


def decide(
    state: QueryState, message: Message, ctx: Context, tables: TableBook | None = None
) -> list[Message]:
    """The reply to a query; nothing for the events it folds. ``tables``: the table book, whose
    terms say how many rounds a history shows (none: every table's length is the default)."""
    if not isinstance(message, Query):
        return []
    envelope = {
        **ctx.envelope(message.player_id, message.round_id),
        "correlation_id": message.correlation_id,
        "requester_id": message.requester_id,
    }
    try:
        if isinstance(message, PromotionsQuery | ProtectionQuery):
            return [_standing(_book(state, message.player_id), message, envelope, ctx)]
        return [_answer(state, message, envelope, tables or TableBook())]
    except Refusal as refusal:
        kind: str = message.type  # type: ignore[attr-defined]
        return [
            QueryRefused(**envelope, query_type=kind, reason=refusal.reason, detail=refusal.detail)
        ]


def _book(state: QueryState, player_id: str) -> Book:
    book = state.book(player_id)
    if book is None:
        raise Refusal(QueryReason.UNKNOWN_PLAYER, f"no round or wallet event of {player_id!r}")
    return book


def _standing(
    book: Book, query: PromotionsQuery | ProtectionQuery, envelope: dict[str, Any], ctx: Context
) -> Message:
    """A player's campaigns, or his limits, block and open sessions (issue 29)."""
    if isinstance(query, PromotionsQuery):
        campaigns = tuple(_as_of(view, ctx) for view in book.campaigns.values())
        return PromotionsReply(**envelope, campaigns=campaigns)
    reason, at = book.blocked or (None, None)
    return ProtectionReply(
        **envelope,
        blocked=book.blocked is not None,
        blocked_reason=reason,
        blocked_at=at,
        limits=tuple(book.limits.values()),
        sessions=tuple(book.sessions.values()),
    )


def _as_of(view: CampaignView, ctx: Context) -> CampaignView:
    """An active campaign past its expiry is over now: the wallet refuses its hands from that
    instant, before its expiry event (written on the wallet's next tick) is read."""
    if view.status != "active" or ctx.now < view.expires_at:
        return view
    update = {"status": "expired", "remaining": 0, "ended_at": view.expires_at}
    return view.model_copy(update=update)


def history_length(tables: TableBook, table_id: str | None) -> int:
    """N of a table's history: its current terms' ``history_length`` (a display rule of the
    table, not a term of a round: a change applies to the next query); the default for rounds
    at no table and tables not (or not yet) in the book."""
    table = tables.get(table_id) if table_id is not None else None
    return table.terms.history_length if table is not None else HISTORY_DEFAULT


def _history(
    state: QueryState, book: Book, query: HistoryQuery, tables: TableBook
) -> tuple[list[RoundView], int]:
    """The rounds a history shows, newest first, and the limit applied: N of the asked table,
    else of the table of the player's latest finished round; fewer if the query asks fewer;
    never more than the service keeps."""
    finished = [
        view
        for view in book.rounds.values()
        if view.finished and query.table_id in (None, view.table_id)
    ]
    finished.sort(key=lambda view: view.ended_at or view.started_at, reverse=True)
    table_id = query.table_id or (finished[0].table_id if finished else None)
    length = history_length(tables, table_id)
    limit = min(query.limit or length, length, state.kept)
    return finished[:limit], limit


def _answer(
    state: QueryState, query: Query, envelope: dict[str, Any], tables: TableBook
) -> Message:
    if isinstance(query, HistoryQuery) and query.mode == Mode.FUN:
        raise Refusal(QueryReason.FUN_NOT_KEPT, "fun rounds are never kept in the history")
    book = _book(state, query.player_id)
    if isinstance(query, OpenRoundQuery):
        still_open = [view for view in book.rounds.values() if not view.finished]
        # An open round's money is not final: its balance after is shown once it is over.
        shown = still_open[-1].model_copy(update={"balance_after": None}) if still_open else None
        return OpenRoundReply(**envelope, open_round=shown)
    if isinstance(query, BalanceQuery):
        lines = tuple(
            BalanceLine(currency=currency, mode=Mode(mode), available=available, held=held)
            for (currency, mode), (available, held) in sorted(book.balances.items())
        )
        return BalanceReply(**envelope, balances=lines)
    if isinstance(query, HistoryQuery):
        rounds, limit = _history(state, book, query, tables)
        return HistoryReply(**envelope, rounds=tuple(rounds), limit=limit)
    assert isinstance(query, RoundSummaryQuery)
    view = book.rounds.get(query.round_id)
    if view is None:
        raise Refusal(
            QueryReason.UNKNOWN_ROUND,
            f"{query.round_id!r} is not one of the player's last {state.kept} real-money rounds",
        )
    if not view.finished:
        raise Refusal(QueryReason.ROUND_NOT_FINISHED, f"{query.round_id!r} is {view.state}")
    return RoundSummaryReply(
        **envelope,  # its round_id is the query's
        lang=query.lang,
        text=render(view, query.lang),
        round=view,
    )
