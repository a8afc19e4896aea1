"""Queries on ``holdem.queries`` and their replies on ``holdem.replies`` (request/reply).

A query is keyed by the player it is about (``player_id``), so it shares a partition with that
player's round and wallet events; it names who asks (``requester_id``) and carries a
``correlation_id`` that its one reply repeats. A reply is keyed by ``requester_id``: the
requester reads only the partition of its own id.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from holdem.core.contracts.base import (
    INPUT,
    Amount,
    Balance,
    CardText,
    Currency,
    Id,
    Message,
    Mode,
    Timestamp,
)
from holdem.core.contracts.promotions import MAX_FREE_HANDS
from holdem.core.contracts.protection import Limits
from holdem.core.contracts.tables import MAX_HISTORY

Language = Literal["en", "bg", "ro", "ms", "nb"]  # the rule sheets' languages (holdem.core.terms)
# A history shows the last N rounds, N the table's history_length (TableTerms, default 10);
# HISTORY_DEFAULT for rounds at no table (a v1 PlaceBet's default table) or an unknown table.
HISTORY_DEFAULT = 10
HISTORY_KEPT = (
    MAX_HISTORY  # real-money rounds the query service keeps per player: the most N can be
)
HISTORY_ASKED_MAX = 10_000  # a larger limit is not a query but bad input
# What the query service keeps per player of his promotions and protection (issue 29): as many
# campaigns as the wallet keeps (open or over), his open sessions (one per table he sits at),
# his limits (one set per currency).
CAMPAIGNS_KEPT = 64
SESSIONS_KEPT = 16
LIMITS_KEPT = 32


class Query(Message):
    model_config = INPUT  # unknown fields refused (ADR 038)
    TOPIC: ClassVar[str] = "queries"
    correlation_id: Id  # required: the reply carries it back
    requester_id: Id  # who reads the reply (its key)


class OpenRoundQuery(Query):
    """The player's open round, with only the cards he may see (resume)."""

    type: Literal["query.open_round"] = "query.open_round"
    version: Literal[1] = 1


class BalanceQuery(Query):
    """The player's balances per currency, real and fun apart."""

    type: Literal["query.balance"] = "query.balance"
    version: Literal[1] = 1


class HistoryQuery(Query):
    """The player's last N finished real-money rounds, N the history length of the table
    (ADR 016): of ``table_id``'s rounds when it is named, else of all his rounds with N of the
    table of his latest one. ``limit`` asks for fewer (never more than N, nor than kept).

    v2: ``limit`` optional (none: N), ``table_id`` added; a v1 query is read the same way."""

    type: Literal["query.history"] = "query.history"
    version: Literal[1, 2] = 2
    limit: int | None = Field(default=None, ge=1, le=HISTORY_ASKED_MAX)
    mode: Mode = Mode.REAL  # fun: refused, fun rounds are never kept
    table_id: Id | None = None

    @model_validator(mode="after")
    def _table_only_in_v2(self) -> HistoryQuery:
        # v1's published schema declares no table_id and refuses unknown fields (ADR 038).
        if self.version == 1 and self.table_id is not None:
            raise ValueError("a v1 history query has no table_id (send version 2)")
        return self


class RoundSummaryQuery(Query):
    """One finished round rendered as a short text in ``lang``."""

    type: Literal["query.round_summary"] = "query.round_summary"
    version: Literal[1] = 1
    round_id: Id
    lang: Language = "en"


class PromotionsQuery(Query):
    """The player's free-hand campaigns (ADR 029), each with the hands he has left."""

    type: Literal["query.promotions"] = "query.promotions"
    version: Literal[1] = 1


class ProtectionQuery(Query):
    """The player's protection (ADR 028): his limits, whether he is blocked, his open
    sessions."""

    type: Literal["query.protection"] = "query.protection"
    version: Literal[1] = 1


class RoundView(BaseModel):
    """One round as a regulator's replay shows it; a card or the deck only once revealed.

    ``state``: bet_placed (no card yet), dealt (hole cards and flop), decided (every card and
    the deck), settled, voided. Returns include the stake (0 when lost); a voided round returns
    every stake taken. Balances are the wallet's available + held before the stake was taken and
    after the round's last money movement (None until the wallet has published them).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    round_id: Id
    state: Literal["bet_placed", "dealt", "decided", "settled", "voided"]
    currency: Currency
    mode: Mode
    table_id: Id | None = None
    table_version: int | None = Field(default=None, ge=0)
    session_id: Id | None = None  # the session the round is played in (reply v2, ADR 020)
    started_at: Timestamp
    ended_at: Timestamp | None = None
    ante: Amount
    aa_bonus: Amount
    call: Amount = 0  # the call stake once called (2 x ante)
    player_cards: tuple[CardText, ...] = Field(default=(), max_length=2)
    flop: tuple[CardText, ...] = Field(default=(), max_length=3)
    turn: CardText | None = None
    river: CardText | None = None
    dealer_cards: tuple[CardText, ...] = Field(default=(), max_length=2)
    decision: Literal["call", "fold"] | None = None
    auto: bool = False  # decided by the table's timeout policy
    result: Literal["win", "lose", "push", "fold", "voided"] | None = None
    dealer_qualifies: bool | None = None
    player_category: str | None = Field(default=None, max_length=32)
    dealer_category: str | None = Field(default=None, max_length=32)
    ante_return: Amount = 0
    call_return: Amount = 0
    bonus_return: Amount = 0
    total_bet: Amount = 0
    total_won: Amount = 0
    balance_before: Balance | None = None
    balance_after: Balance | None = None
    commitment: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    deck: tuple[CardText, ...] | None = Field(default=None, min_length=52, max_length=52)
    salt: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    pay_table: str | None = Field(default=None, max_length=64)
    void_reason: str | None = Field(default=None, max_length=500)

    @property
    def finished(self) -> bool:
        return self.state in ("settled", "voided")


class BalanceLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    currency: Currency
    mode: Mode
    available: Balance
    held: Balance


class CampaignView(BaseModel):
    """One free-hand campaign of the player as the wallet's events tell it: its hands, how many
    were played (a voided hand is given back), how many are left. ``status``: active,
    cancelled or expired; a campaign past ``expires_at`` is shown expired with none left (the
    wallet refuses its hands from that instant) even before its expiry event is read."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    campaign_id: Id
    table_id: Id
    currency: Currency
    ante: Amount
    aa_bonus: Amount
    hands: int = Field(strict=True, ge=1, le=MAX_FREE_HANDS)
    played: int = Field(default=0, strict=True, ge=0, le=MAX_FREE_HANDS)
    remaining: int = Field(strict=True, ge=0, le=MAX_FREE_HANDS)
    status: Literal["active", "cancelled", "expired"] = "active"
    granted_at: Timestamp
    expires_at: Timestamp
    ended_at: Timestamp | None = None  # when it was cancelled or expired


class SessionView(BaseModel):
    """One open session of the player at a table (ADR 020): since when, and when he last
    acknowledged a reality check (its start until he does)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    session_id: Id
    table_id: Id
    mode: Mode = Mode.REAL
    started_at: Timestamp
    checked_at: Timestamp


class QueryReason(StrEnum):
    """Why a readable query got no answer but a refusal."""

    UNKNOWN_PLAYER = "unknown_player"  # no round or wallet event of this player on record
    UNKNOWN_ROUND = "unknown_round"  # not one of the player's kept rounds (fun, too old, none)
    ROUND_NOT_FINISHED = "round_not_finished"  # a summary of a round still open
    FUN_NOT_KEPT = "fun_not_kept"  # history in fun mode: fun rounds are never kept


# The figures a round has not reached yet, by state: the call before a decision, the returns
# and what was won before the round is over. A reply leaves them out rather than show a 0 the
# round has not come to (issue 29: a dealt round showed ``call 0``).
_NOT_YET: dict[str, frozenset[str]] = {
    "bet_placed": frozenset({"call", "auto", "ante_return", "call_return", "bonus_return",
                             "total_won", "balance_after"}),
    "decided": frozenset({"ante_return", "call_return", "bonus_return", "total_won",
                          "balance_after"}),
}  # fmt: skip
_NOT_YET["dealt"] = _NOT_YET["bet_placed"]


def _known(view: Any) -> Any:
    """A round view as a reply shows it: what is not known yet or not revealed (a null or
    empty field) left out, as the guide says, and the figures its state has not reached; it
    reads back as its defaults."""
    if not isinstance(view, dict):
        return view
    later = _NOT_YET.get(view.get("state", ""), frozenset())
    return {
        k: v for k, v in view.items() if v is not None and v != [] and v != () and k not in later
    }


def _no_nulls(value: Any) -> Any:
    """``value`` with every null field of its objects left out, at any depth."""
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_no_nulls(v) for v in value]
    return value


class Reply(Message):
    """What the query service answers. A reply leaves out its null optional fields (a reply has
    no ``round_id`` of its own, a campaign still running no ``ended_at``): absent, they read as
    null (issue 29). A required field that may be null (``open_round``: none open) stays."""

    TOPIC: ClassVar[str] = "replies"
    correlation_id: Id  # the query's
    requester_id: Id

    @property
    def key(self) -> str:
        """Replies go to the requester's partition, not the player's."""
        return self.requester_id

    @model_serializer(mode="wrap")
    def _without_nulls(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        shown: dict[str, Any] = handler(self)
        required = {name for name, field in type(self).model_fields.items() if field.is_required()}
        shown = {k: _no_nulls(v) for k, v in shown.items() if v is not None or k in required}
        # A round view also leaves out what is not known yet (the views a service keeps, its
        # snapshot, are written whole: they are not replies).
        for name in ("open_round", "round"):
            if name in shown:
                shown[name] = _known(shown[name])
        if "rounds" in shown:
            shown["rounds"] = [_known(view) for view in shown["rounds"]]
        return shown


class OpenRoundReply(Reply):
    type: Literal["reply.open_round"] = "reply.open_round"
    version: Literal[1, 2] = 2  # v2: RoundView.session_id (ADR 020)
    open_round: RoundView | None  # None: no round open


class BalanceReply(Reply):
    type: Literal["reply.balance"] = "reply.balance"
    version: Literal[1] = 1
    balances: tuple[BalanceLine, ...]


class HistoryReply(Reply):
    type: Literal["reply.history"] = "reply.history"
    version: Literal[1, 2] = 2  # v2: RoundView.session_id (ADR 020)
    rounds: tuple[RoundView, ...] = Field(max_length=HISTORY_KEPT)  # newest first
    limit: int = Field(ge=1, le=HISTORY_KEPT)  # the limit applied (the asked one, capped)


class RoundSummaryReply(Reply):
    type: Literal["reply.round_summary"] = "reply.round_summary"
    version: Literal[1, 2] = 2  # v2: RoundView.session_id (ADR 020)
    round_id: Id
    lang: Language
    text: str = Field(max_length=2000)
    round: RoundView


class PromotionsReply(Reply):
    type: Literal["reply.promotions"] = "reply.promotions"
    version: Literal[1] = 1
    campaigns: tuple[CampaignView, ...] = Field(max_length=CAMPAIGNS_KEPT)  # oldest first


class ProtectionReply(Reply):
    """``blocked``: the player may not bet (``blocked_reason``, ``blocked_at`` the block's);
    ``limits``: one set per currency (a limit left out is none); ``sessions``: his open ones."""

    type: Literal["reply.protection"] = "reply.protection"
    version: Literal[1] = 1
    blocked: bool
    blocked_reason: str | None = Field(default=None, max_length=200)
    blocked_at: Timestamp | None = None
    limits: tuple[Limits, ...] = Field(max_length=LIMITS_KEPT)
    sessions: tuple[SessionView, ...] = Field(max_length=SESSIONS_KEPT)


class QueryRefused(Reply):
    type: Literal["reply.refused"] = "reply.refused"
    version: Literal[1] = 1
    query_type: str = Field(max_length=64)
    reason: QueryReason
    detail: str = Field(default="", max_length=500)
