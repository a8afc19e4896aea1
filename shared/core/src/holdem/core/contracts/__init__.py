"""Message contracts: pydantic v2 models, one discriminated union per topic, and their parsing.

Operators import these to build commands and read events. Every model is frozen, carries a
stable ``type`` and a ``version``; unknown optional fields are ignored.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TypeAlias

from pydantic import Field, TypeAdapter, ValidationError

from holdem.core.contracts.base import (
    MAX_AMOUNT,
    Command,
    Envelope,
    LimitKind,
    Message,
    Mode,
    OperatorRefusal,
    ProtectionRefusal,
    RealityCheck,
    Reason,
    RecordReason,
)
from holdem.core.contracts.commands import (
    Call,
    Deposit,
    Fold,
    GrantFun,
    PlaceBet,
    Rebet,
    ResetFun,
    VoidRound,
    Withdraw,
)
from holdem.core.contracts.forced import DeckForced, DeckForceRejected, ForceNextDeck, ForceRefusal
from holdem.core.contracts.promotions import (
    CAMPAIGN_EVENTS,
    PROMO_COMMANDS,
    PROMO_MOVES,
    CampaignEvent,
    CancelFreeHands,
    CreditPromo,
    FreeHandsCancelled,
    FreeHandsExpired,
    FreeHandsGranted,
    FreeStakeRefunded,
    FreeStakeTaken,
    GrantFreeHands,
    PlayFreeHand,
    PromoCredited,
    PromoReason,
    PromoRejected,
)
from holdem.core.contracts.protection import (
    PROTECTION_COMMANDS,
    AcknowledgeRealityCheck,
    BlockPlayer,
    LimitsSet,
    PlayerBlocked,
    PlayerUnblocked,
    ProtectionRejected,
    ProtectionRejection,
    RealityCheckAcknowledged,
    RoundClosed,
    SetLimits,
    UnblockPlayer,
)
from holdem.core.contracts.queries import (
    BalanceQuery,
    BalanceReply,
    HistoryQuery,
    HistoryReply,
    OpenRoundQuery,
    OpenRoundReply,
    QueryReason,
    QueryRefused,
    RoundSummaryQuery,
    RoundSummaryReply,
    RoundView,
)
from holdem.core.contracts.rejected import MessageRejected
from holdem.core.contracts.rounds import (
    BetPlaced,
    BetRejected,
    Called,
    CommandRejected,
    Dealt,
    DeckSealed,
    Folded,
    Malfunction,
    RoundVoided,
    Settled,
)
from holdem.core.contracts.seamless import (
    SEAMLESS_MOVES,
    SEAMLESS_REPLIES,
    SEAMLESS_REQUESTS,
    Credited,
    CreditRequested,
    Debited,
    DebitRejected,
    DebitRequested,
    ReplyRefused,
    RollbackRequested,
    RolledBack,
    RoundClosedAcknowledged,
    RoundClosedNotice,
    SeamlessCredited,
    SeamlessDebited,
    SeamlessRolledBack,
)
from holdem.core.contracts.sessions import (
    EndSession,
    OperatorEndReason,
    SessionEnded,
    SessionEndReason,
    SessionRefusal,
    SessionRejected,
    SessionStarted,
)
from holdem.core.contracts.tables import (
    ChangeTable,
    CloseTable,
    CreateTable,
    TableChanged,
    TableClosed,
    TableCommand,
    TableEvent,
    TableMessage,
    TableOpened,
    TableRejected,
    TableTerms,
    TimeoutPolicy,
)
from holdem.core.contracts.versions import Versioned, upcast
from holdem.core.contracts.wallet import (
    CallCaptured,
    CallHeld,
    CallReleased,
    FundsDeposited,
    FundsWithdrawn,
    PayoutCredited,
    StakesRefunded,
    StakeTaken,
    WalletRejected,
)

AnyCommand: TypeAlias = Annotated[
    PlaceBet
    | Call
    | Fold
    | VoidRound
    | Deposit
    | Withdraw
    | Rebet
    | GrantFun
    | ResetFun
    | EndSession
    | SetLimits
    | BlockPlayer
    | UnblockPlayer
    | AcknowledgeRealityCheck
    | ForceNextDeck
    # Promotions (ADR 029)
    | CreditPromo
    | GrantFreeHands
    | CancelFreeHands
    | PlayFreeHand,
    Field(discriminator="type"),
]
AdminCommand: TypeAlias = Annotated[
    CreateTable | ChangeTable | CloseTable, Field(discriminator="type")
]
TableLogMessage: TypeAlias = Annotated[
    TableOpened | TableChanged | TableClosed | TableRejected, Field(discriminator="type")
]
RoundMessage: TypeAlias = Annotated[
    BetPlaced
    | BetRejected
    | Dealt
    | Called
    | Folded
    | Settled
    | Malfunction
    | RoundVoided
    | CommandRejected
    | SessionStarted
    | SessionEnded
    | SessionRejected
    | RoundClosed
    | PlayerBlocked
    | PlayerUnblocked
    | DeckForced
    | DeckForceRejected,
    Field(discriminator="type"),
]
WalletMessage: TypeAlias = Annotated[
    FundsDeposited
    | FundsWithdrawn
    | StakeTaken
    | CallHeld
    | CallCaptured
    | CallReleased
    | PayoutCredited
    | StakesRefunded
    | WalletRejected
    | SeamlessDebited
    | SeamlessCredited
    | SeamlessRolledBack
    # The seamless wallet bridge (ADR 015): its requests to the operator's wallet.
    | DebitRequested
    | CreditRequested
    | RollbackRequested
    | ReplyRefused
    | RoundClosedNotice
    # Player protection (ADR 028): the wallet's answers to the protection commands.
    | LimitsSet
    | RealityCheckAcknowledged
    | ProtectionRejected
    # Promotions (ADR 029): promotion money and free-hand campaigns.
    | PromoCredited
    | FreeStakeTaken
    | FreeStakeRefunded
    | FreeHandsGranted
    | FreeHandsCancelled
    | FreeHandsExpired
    | PromoRejected,
    Field(discriminator="type"),
]
# The operator's wallet's answers (ADR 015).
SeamlessReplyMessage: TypeAlias = Annotated[
    Debited | DebitRejected | Credited | RolledBack | RoundClosedAcknowledged,
    Field(discriminator="type"),
]
_COMMANDS: tuple[type[Command], ...] = (
    PlaceBet, Call, Fold, VoidRound, Deposit, Withdraw, Rebet, GrantFun, ResetFun, EndSession,
    ForceNextDeck, *PROMO_COMMANDS, *PROTECTION_COMMANDS,
)  # fmt: skip
COMMAND_TYPES: frozenset[str] = frozenset(model.model_fields["type"].default for model in _COMMANDS)
ADMIN_TYPES: frozenset[str] = frozenset(
    model.model_fields["type"].default for model in (CreateTable, ChangeTable, CloseTable)
)


def _types(*models: type[Message]) -> frozenset[str]:
    return frozenset(model.model_fields["type"].default for model in models)


# Who answers each command, which is also its ``command_id``'s scope (ADR 022): an id is the
# player's within its owner's commands (a reuse with another command or body of the same owner
# is refused ``duplicate``); the wallet's and the dealer's commands are two scopes.
COMMAND_OWNERS: dict[str, frozenset[str]] = {
    "wallet": _types(
        PlaceBet,
        Rebet,
        Deposit,
        Withdraw,
        GrantFun,
        ResetFun,
        *PROTECTION_COMMANDS,
        *PROMO_COMMANDS,
    ),
    "dealer": _types(Call, Fold, VoidRound, EndSession, ForceNextDeck),
}
assert frozenset().union(*COMMAND_OWNERS.values()) == COMMAND_TYPES, "a command without owner"
AnyQuery: TypeAlias = Annotated[
    OpenRoundQuery | BalanceQuery | HistoryQuery | RoundSummaryQuery, Field(discriminator="type")
]
AnyReply: TypeAlias = Annotated[
    OpenRoundReply | BalanceReply | HistoryReply | RoundSummaryReply | QueryRefused,
    Field(discriminator="type"),
]
VaultMessage: TypeAlias = DeckSealed
RejectedMessage: TypeAlias = MessageRejected

# topic role ("commands", "rounds", ...) -> the union read from it
UNIONS: dict[str, Any] = {
    "commands": AnyCommand,
    "rounds": RoundMessage,
    "wallet": WalletMessage,
    "vault": VaultMessage,
    "rejected": RejectedMessage,
    "queries": AnyQuery,
    "replies": AnyReply,
    "seamless_replies": SeamlessReplyMessage,
    "admin": AdminCommand,
    "tables": TableLogMessage,
}
ADAPTERS: dict[str, TypeAdapter[Any]] = {role: TypeAdapter(union) for role, union in UNIONS.items()}

ALL_MODELS: tuple[type[Envelope], ...] = (
    PlaceBet, Call, Fold, VoidRound, Deposit, Withdraw, Rebet, GrantFun, ResetFun,
    BetPlaced, BetRejected, Dealt, Called, Folded, Settled, Malfunction, RoundVoided,
    CommandRejected, DeckSealed,
    EndSession, SessionStarted, SessionEnded, SessionRejected,
    ForceNextDeck, DeckForced, DeckForceRejected,
    FundsDeposited, FundsWithdrawn, StakeTaken, CallHeld, CallCaptured, CallReleased,
    PayoutCredited, StakesRefunded, WalletRejected,
    MessageRejected,
    OpenRoundQuery, BalanceQuery, HistoryQuery, RoundSummaryQuery,
    OpenRoundReply, BalanceReply, HistoryReply, RoundSummaryReply, QueryRefused,
    *SEAMLESS_REQUESTS, *SEAMLESS_REPLIES, *SEAMLESS_MOVES,
    CreateTable, ChangeTable, CloseTable, TableOpened, TableChanged, TableClosed, TableRejected,
    SetLimits, BlockPlayer, UnblockPlayer, AcknowledgeRealityCheck,
    LimitsSet, RealityCheckAcknowledged, ProtectionRejected,
    PlayerBlocked, PlayerUnblocked, RoundClosed,
    *PROMO_COMMANDS, *PROMO_MOVES, *CAMPAIGN_EVENTS, PromoRejected,
)  # fmt: skip


# The types with older versions they read through upcasts (ADR 032).
VERSIONED: dict[str, type[Versioned]] = {}
for _model in ALL_MODELS:
    if issubclass(_model, Versioned):
        VERSIONED[str(_model.model_fields["type"].default)] = _model


class ContractError(ValueError):
    """A record that is not a valid message for its topic; ``reason`` says which way."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


def parse(role: str, raw: bytes | str) -> Any:
    """Parse one record of topic ``role`` into its model, or raise ``ContractError``.

    >>> parse("commands", b'{"type": "command.call", "event_id": "e1", "command_id": "c1",'
    ...       b' "player_id": "p1", "round_id": "r1", "occurred_at": "2026-01-01T00:00:00Z"}').type
    'command.call'
    """
    adapter = ADAPTERS[role]
    try:
        # Strict: exactly what the published JSON Schema allows (no 0 for a time, no 1.0 for 1).
        return adapter.validate_json(raw, strict=True)
    except ValidationError as error:
        older = _as_newest(raw)
        if older is not None:  # an older version its type still reads (ADR 032)
            return parse(role, older)
        first = error.errors()[0]
        if first["type"] in {"union_tag_invalid", "union_tag_not_found"}:
            raise ContractError(Reason.UNKNOWN_TYPE, first["msg"]) from None
        if first["type"] == "json_invalid" or not first["loc"]:
            raise ContractError(Reason.MALFORMED, first["msg"]) from None
        where = ".".join(str(part) for part in first["loc"][1:]) or "message"
        raise ContractError(Reason.INVALID, f"{where}: {first['msg']}") from None


def _as_newest(raw: bytes | str) -> bytes | None:
    """``raw`` as the newest version of its type, if it is an older one that type reads."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    model = VERSIONED.get(str(body.get("type"))) if isinstance(body, dict) else None
    newer = None if model is None else upcast(model, body)
    return None if newer is None else json.dumps(newer).encode()


def type_names(*models: type[Envelope]) -> frozenset[str]:
    """The wire ``type`` strings of these models (what a service declares it reads).

    >>> sorted(type_names(Call, Fold))
    ['command.call', 'command.fold']
    """
    return frozenset(str(model.model_fields["type"].default) for model in models)


def dump(message: Envelope) -> bytes:
    """The wire form of a message (JSON, UTF-8), at the version this release writes of it
    (``holdem.core.contracts.versions``)."""
    if isinstance(message, Versioned):
        return message.written()
    return message.model_dump_json().encode()


__all__ = [
    "ADAPTERS",
    "ADMIN_TYPES",
    "ALL_MODELS",
    "CAMPAIGN_EVENTS",
    "COMMAND_OWNERS",
    "COMMAND_TYPES",
    "MAX_AMOUNT",
    "PROMO_COMMANDS",
    "PROMO_MOVES",
    "UNIONS",
    "AcknowledgeRealityCheck",
    "AdminCommand",
    "AnyCommand",
    "AnyQuery",
    "AnyReply",
    "BalanceQuery",
    "BalanceReply",
    "BetPlaced",
    "BetRejected",
    "BlockPlayer",
    "Call",
    "CallCaptured",
    "CallHeld",
    "CallReleased",
    "Called",
    "CampaignEvent",
    "CancelFreeHands",
    "ChangeTable",
    "CloseTable",
    "Command",
    "CommandRejected",
    "ContractError",
    "CreateTable",
    "CreditPromo",
    "Dealt",
    "DeckForceRejected",
    "DeckForced",
    "DeckSealed",
    "Deposit",
    "EndSession",
    "Envelope",
    "Fold",
    "Folded",
    "ForceNextDeck",
    "ForceRefusal",
    "FreeHandsCancelled",
    "FreeHandsExpired",
    "FreeHandsGranted",
    "FreeStakeRefunded",
    "FreeStakeTaken",
    "FundsDeposited",
    "FundsWithdrawn",
    "GrantFreeHands",
    "GrantFun",
    "HistoryQuery",
    "HistoryReply",
    "LimitKind",
    "LimitsSet",
    "Malfunction",
    "Message",
    "MessageRejected",
    "Mode",
    "OpenRoundQuery",
    "OpenRoundReply",
    "OperatorEndReason",
    "OperatorRefusal",
    "PayoutCredited",
    "PlaceBet",
    "PlayFreeHand",
    "PlayerBlocked",
    "PlayerUnblocked",
    "PromoCredited",
    "PromoReason",
    "PromoRejected",
    "ProtectionRefusal",
    "ProtectionRejected",
    "ProtectionRejection",
    "QueryReason",
    "QueryRefused",
    "RealityCheck",
    "RealityCheckAcknowledged",
    "Reason",
    "Rebet",
    "RecordReason",
    "ResetFun",
    "RoundClosed",
    "RoundMessage",
    "RoundSummaryQuery",
    "RoundSummaryReply",
    "RoundView",
    "RoundVoided",
    "SeamlessReplyMessage",
    "SessionEndReason",
    "SessionEnded",
    "SessionRefusal",
    "SessionRejected",
    "SessionStarted",
    "SetLimits",
    "Settled",
    "StakeTaken",
    "StakesRefunded",
    "TableChanged",
    "TableClosed",
    "TableCommand",
    "TableEvent",
    "TableLogMessage",
    "TableMessage",
    "TableOpened",
    "TableRejected",
    "TableTerms",
    "TimeoutPolicy",
    "UnblockPlayer",
    "VoidRound",
    "WalletMessage",
    "WalletRejected",
    "Withdraw",
    "dump",
    "parse",
    "type_names",
]
