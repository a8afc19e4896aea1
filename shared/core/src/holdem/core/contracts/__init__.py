"""Message contracts: pydantic v2 models, one discriminated union per topic, and their parsing.

Operators import these to build commands and read events. Every model is frozen, carries a
stable ``type`` and a ``version``. A command, admin command or query refuses a field its version
does not declare; an event or reply ignores unknown fields (ADR 038).
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import AfterValidator, Discriminator, Field, Tag, TypeAdapter, ValidationError

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
    PromotionsQuery,
    PromotionsReply,
    ProtectionQuery,
    ProtectionReply,
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
from holdem.core.contracts.seamless import SEAMLESS_MOVES, SEAMLESS_REPLIES, SEAMLESS_REQUESTS
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
from holdem.core.contracts.versions import Versioned
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

# Every model, the one list a new message type is added to: by topic (each model names its
# ``TOPIC``; a command its ``OWNER``), in the order of its topic's union (the exported schemas
# and AsyncAPI documents list them so). Everything below is derived from it.
ALL_MODELS: tuple[type[Envelope], ...] = (
    # commands
    PlaceBet, Call, Fold, VoidRound, Deposit, Withdraw, Rebet, GrantFun, ResetFun, EndSession,
    *PROTECTION_COMMANDS, ForceNextDeck, *PROMO_COMMANDS,
    # admin, tables
    CreateTable, ChangeTable, CloseTable, TableOpened, TableChanged, TableClosed, TableRejected,
    # rounds
    BetPlaced, BetRejected, Dealt, Called, Folded, Settled, Malfunction, RoundVoided,
    CommandRejected, SessionStarted, SessionEnded, SessionRejected, RoundClosed,
    PlayerBlocked, PlayerUnblocked, DeckForced, DeckForceRejected,
    # vault
    DeckSealed,
    # wallet
    FundsDeposited, FundsWithdrawn, StakeTaken, CallHeld, CallCaptured, CallReleased,
    PayoutCredited, StakesRefunded, WalletRejected,
    *SEAMLESS_MOVES,
    *SEAMLESS_REQUESTS,  # the seamless wallet bridge (ADR 015): to the operator's wallet
    LimitsSet, RealityCheckAcknowledged, ProtectionRejected,  # player protection (ADR 028)
    *PROMO_MOVES, *CAMPAIGN_EVENTS, PromoRejected,  # promotions (ADR 029)
    # seamless_replies: the operator's wallet's answers (ADR 015)
    *SEAMLESS_REPLIES,
    # rejected
    MessageRejected,
    # queries, replies
    OpenRoundQuery, BalanceQuery, HistoryQuery, RoundSummaryQuery,
    PromotionsQuery, ProtectionQuery,  # issue 29
    OpenRoundReply, BalanceReply, HistoryReply, RoundSummaryReply, QueryRefused,
    PromotionsReply, ProtectionReply,
)  # fmt: skip


def models_of(role: str) -> tuple[type[Envelope], ...]:
    """The models published on topic ``role``, in their union's order."""
    return tuple(model for model in ALL_MODELS if role == model.TOPIC)


def _union(role: str, *, older: bool = False) -> Any:
    """What is read from topic ``role``: its one model, or the union of its models by ``type``
    (``older``: each versioned model with the models of the older versions it reads)."""
    models: tuple[Any, ...] = models_of(role)
    if older:
        models = tuple(_by_version(m) if issubclass(m, Versioned) else m for m in models)
    if len(models) == 1:
        return models[0]
    return Annotated[Union[models], Field(discriminator="type")]  # noqa: UP007


def _by_version(model: type[Versioned]) -> Any:
    """``model`` and the models of its older versions, chosen by the record's ``version`` before
    anything is validated (ADR 032): an older one is validated once, as what it is, then read as
    the newest (``Versioned.from_older``). Any other version, or none, is the newest's to judge,
    as if there were no older ones: the same acceptance and the same refusals."""
    assert set(model.OLDER) == set(model.UPCASTS), f"{model.__name__}: a model per upcast"
    if not model.OLDER:
        return model
    newest = str(model.newest())
    choices = [Annotated[model, Tag(newest)]]
    choices += [
        Annotated[older, AfterValidator(model.from_older), Tag(str(version))]
        for version, older in sorted(model.OLDER.items())
    ]
    tags = {version: str(version) for version in model.OLDER}

    def version_of(value: Any) -> str:
        version = value.get("version") if isinstance(value, dict) else None
        return tags.get(version, newest) if type(version) is int else newest

    return Annotated[Union[tuple(choices)], Discriminator(version_of)]  # noqa: UP007


def _types(*models: type[Envelope]) -> frozenset[str]:
    return frozenset(str(model.model_fields["type"].default) for model in models)


# topic role ("commands", "rounds", ...) -> the union read from it
UNIONS: dict[str, Any] = {role: _union(role) for role in dict.fromkeys(m.TOPIC for m in ALL_MODELS)}
# What parse validates a record of topic ``role`` with: its union, older versions included.
ADAPTERS: dict[str, TypeAdapter[Any]] = {
    role: TypeAdapter(_union(role, older=True)) for role in UNIONS
}
COMMAND_TYPES: frozenset[str] = _types(*models_of("commands"))
ADMIN_TYPES: frozenset[str] = _types(*models_of("admin"))
# Who answers each command, which is also its ``command_id``'s scope (ADR 022): an id is the
# player's within its owner's commands (a reuse with another command or body of the same owner
# is refused ``duplicate``); the wallet's and the dealer's commands are two scopes.
COMMAND_OWNERS: dict[str, frozenset[str]] = {
    owner: _types(*(m for m in models_of("commands") if getattr(m, "OWNER", "") == owner))
    for owner in ("wallet", "dealer")
}
assert frozenset().union(*COMMAND_OWNERS.values()) == COMMAND_TYPES, "a command without owner"


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
        first = error.errors()[0]
        if first["type"] in {"union_tag_invalid", "union_tag_not_found"}:
            raise ContractError(Reason.UNKNOWN_TYPE, first["msg"]) from None
        if first["type"] == "json_invalid" or not first["loc"]:
            raise ContractError(Reason.MALFORMED, first["msg"]) from None
        loc = first["loc"][1:]
        if first["loc"][0] in VERSIONED and loc and isinstance(loc[0], str) and loc[0].isdigit():
            loc = loc[1:]  # the version a versioned type's record was validated as (its tag)
        where = ".".join(str(part) for part in loc) or "message"
        raise ContractError(Reason.INVALID, f"{where}: {first['msg']}") from None


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


def written_as_is(message: Envelope) -> bool:
    """Whether ``dump(message)`` is the message at its own version, so that parsing it gives
    the message back (one written at an older version during an upgrade, ADR 032, does not:
    its newer fields are upcast, not kept)."""
    if isinstance(message, Versioned):
        return message.WRITES is None or message.newest() == message.WRITES
    return True


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
    "PromotionsQuery",
    "PromotionsReply",
    "ProtectionQuery",
    "ProtectionRefusal",
    "ProtectionRejected",
    "ProtectionRejection",
    "ProtectionReply",
    "QueryReason",
    "QueryRefused",
    "RealityCheck",
    "RealityCheckAcknowledged",
    "Reason",
    "Rebet",
    "RecordReason",
    "ResetFun",
    "RoundClosed",
    "RoundSummaryQuery",
    "RoundSummaryReply",
    "RoundView",
    "RoundVoided",
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
    "TableMessage",
    "TableOpened",
    "TableRejected",
    "TableTerms",
    "TimeoutPolicy",
    "UnblockPlayer",
    "VoidRound",
    "WalletRejected",
    "Withdraw",
    "dump",
    "models_of",
    "parse",
    "type_names",
    "written_as_is",
]
