"""Player protection in transfer mode and the end of a round's money (ADR 028).

The operator sets a player's limits (``SetLimits``), blocks and unblocks him (``BlockPlayer``,
``UnblockPlayer``); the player acknowledges a reality check (``AcknowledgeRealityCheck``). The
wallet owns all four (it admits bets) and answers on ``holdem.wallet`` (``LimitsSet``,
``RealityCheckAcknowledged``, ``ProtectionRejected``) or, for a block the dealer must act on,
on ``holdem.rounds`` (``PlayerBlocked``, ``PlayerUnblocked``). ``RoundClosed`` on
``holdem.rounds`` says a round takes no more money movements."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from holdem.core.contracts.base import (
    MAX_AMOUNT,
    Amount,
    Command,
    Currency,
    Id,
    Message,
    Mode,
)
from holdem.core.contracts.rounds import RoundEvent
from holdem.core.contracts.versions import Step, Versioned
from holdem.core.contracts.wallet import Fingerprint

MAX_SESSION_LENGTH_S: Final = 7 * 24 * 3600  # a week: anything longer is not a session limit
MIN_REALITY_CHECK_S: Final = 60  # a reminder every minute is the most a player can be asked
MAX_REALITY_CHECK_S: Final = 24 * 3600


class Limits(BaseModel):
    """A player's limits in one currency; None is no limit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    currency: Currency
    wager_per_day: Amount | None = None
    loss_per_day: Amount | None = None
    session_length_s: int | None = Field(default=None, strict=True, ge=1, le=MAX_SESSION_LENGTH_S)
    reality_check_s: int | None = Field(
        default=None, strict=True, ge=MIN_REALITY_CHECK_S, le=MAX_REALITY_CHECK_S
    )


class SetLimits(Command):
    """The player's limits in ``currency`` (real money), replacing the previous ones; a limit
    left out (None) is no limit. Wager and loss are per UTC day, in minor units; the session
    length is the seconds since the start of the player's session at a table; every
    ``reality_check_s`` of a session at a table his next bet there waits for his
    acknowledgement (ADR 028)."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.set_limits"] = "command.set_limits"
    version: Literal[1] = 1
    limits: Limits


class BlockPlayer(Command):
    """No new bet from the player; his open sessions end and their open rounds are finished by
    their table's policy."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.block_player"] = "command.block_player"
    version: Literal[1] = 1
    reason: str = Field(default="operator", max_length=200)


class UnblockPlayer(Command):
    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.unblock_player"] = "command.unblock_player"
    version: Literal[1] = 1


class AcknowledgeRealityCheck(Command):
    """The player read the reality check of his session at ``table_id``: he may bet again."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.acknowledge_reality_check"] = "command.acknowledge_reality_check"
    version: Literal[1] = 1
    table_id: Id


class ProtectionEvent(Message):
    """The wallet's answer to a protection command (what answers its command_id again)."""

    TOPIC: ClassVar[str] = "wallet"
    command_id: Id
    fingerprint: Fingerprint | None = None


class LimitsSet(ProtectionEvent):
    type: Literal["wallet.limits_set"] = "wallet.limits_set"
    version: Literal[1] = 1
    limits: Limits


class RealityCheckAcknowledged(ProtectionEvent):
    """The next reality check of the session falls ``reality_check_s`` after ``occurred_at``."""

    type: Literal["wallet.reality_check_acknowledged"] = "wallet.reality_check_acknowledged"
    version: Literal[1] = 1
    table_id: Id
    session_id: Id


class ProtectionRejection(StrEnum):
    """Why a protection command was refused; nothing changed."""

    INVALID = "invalid"  # e.g. limits that contradict each other, a command out of the window
    UNKNOWN_PLAYER = "unknown_player"  # the wallet never held money for this player
    DUPLICATE = "duplicate"  # the command_id was used for another command or body
    ALREADY_BLOCKED = "already_blocked"
    NOT_BLOCKED = "not_blocked"
    NO_REALITY_CHECK = "no_reality_check"  # no reality check is due at that table


class ProtectionRejected(ProtectionEvent):
    type: Literal["wallet.protection_rejected"] = "wallet.protection_rejected"
    version: Literal[1] = 1
    command_type: str
    reason: ProtectionRejection
    detail: str = Field(default="", max_length=500)


class PlayerEvent(ProtectionEvent):
    """A player's state the dealer acts on, written by the wallet on ``holdem.rounds``."""

    TOPIC: ClassVar[str] = "rounds"


class PlayerBlocked(PlayerEvent):
    """The player may not bet; the dealer ends his open sessions (reason ``blocked``)."""

    type: Literal["round.player_blocked"] = "round.player_blocked"
    version: Literal[1] = 1
    reason: str = Field(default="operator", max_length=200)


class PlayerUnblocked(PlayerEvent):
    type: Literal["round.player_unblocked"] = "round.player_unblocked"
    version: Literal[1] = 1


def _closed_v1_as_v2(body: dict[str, Any]) -> dict[str, Any]:
    staked, returned = body.get("staked"), body.get("returned")
    both = type(staked) is int and type(returned) is int  # else the v2 checks say what is wrong
    return {**body, "net": returned - staked} if both else body  # type: ignore[operator]


def _closed_v2_as_v1(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "net"}


class _RoundClosedOfAnyVersion(RoundEvent):
    """What every version of ``round.closed`` holds and checks."""

    type: Literal["round.closed"] = "round.closed"
    version: int
    outcome: Literal["settled", "voided"]
    currency: Currency
    mode: Mode = Mode.REAL
    staked: Amount
    returned: Amount

    @model_validator(mode="after")
    def _voided_returns_the_stakes(self) -> Self:
        if self.outcome == "voided" and self.returned != self.staked:
            raise ValueError("a voided round returns exactly what it took")
        return self


class RoundClosedV1(_RoundClosedOfAnyVersion):
    """A v1 ``round.closed`` as it is on the wire (no ``net``): validated as such, then read as
    a ``RoundClosed`` (``RoundClosed.from_older``). Not a model any service uses."""

    version: Literal[1] = 1


class RoundClosed(Versioned, _RoundClosedOfAnyVersion):
    """The round takes no more money movements: written by the wallet after its last one (the
    payout of a Settled, the refund of a RoundVoided; in seamless mode once the operator's
    wallet acknowledged the credit or rollback). One per round that took a stake. ``staked``:
    what the round took (ante, bonus, a captured call); ``returned``: what it gave back.

    v2: ``net``, the player's result (``returned - staked``: negative when he lost), which a
    v1 record is read with (ADR 032). This release reads both and still writes v1, so that a
    release that reads v1 only can run beside it; the next one writes v2."""

    version: Literal[2] = 2
    net: Annotated[int, Field(strict=True, ge=-MAX_AMOUNT, le=MAX_AMOUNT)]

    UPCASTS: ClassVar[Mapping[int, Step]] = {1: _closed_v1_as_v2}
    OLDER: ClassVar[Mapping[int, type[BaseModel]]] = {1: RoundClosedV1}
    DOWNCASTS: ClassVar[Mapping[int, Step]] = {2: _closed_v2_as_v1}
    WRITES: ClassVar[int | None] = 1

    @model_validator(mode="after")
    def _net_is_the_result(self) -> Self:
        if self.net != self.returned - self.staked:
            raise ValueError("net is what the round returned less what it took")
        return self


PROTECTION_COMMANDS = (SetLimits, BlockPlayer, UnblockPlayer, AcknowledgeRealityCheck)
PROTECTION_EVENTS = (LimitsSet, RealityCheckAcknowledged, ProtectionRejected)
PLAYER_EVENTS = (PlayerBlocked, PlayerUnblocked)
