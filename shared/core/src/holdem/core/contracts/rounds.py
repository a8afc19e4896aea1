"""Round events on ``holdem.rounds`` (the public round log) and the dealer's private vault."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from pydantic import Field

from holdem.core.contracts.base import (
    Amount,
    CardText,
    Currency,
    Id,
    LimitKind,
    Message,
    Mode,
    OperatorRefusal,
    ProtectionRefusal,
    RealityCheck,
    Reason,
)
from holdem.core.contracts.tables import (
    MAX_IDLE_TIMEOUT_S,
    PayTableVersion,
    TableVersion,
    TimeoutPolicy,
)
from holdem.core.decider import Context

# Malfunction.reason prefixes of the wallet's refusals of a Settled (ADR 008): one that is not
# the rules' result of the round, and one for a round with no open stake (paid, refunded, none).
SETTLEMENT_MISMATCH = "settlement_mismatch"
SETTLEMENT_DUPLICATE = "settlement_duplicate"


class RoundEvent(Message):
    TOPIC: ClassVar[str] = "rounds"
    round_id: Id


class BetPlaced(RoundEvent):
    """The wallet took ante + bonus and holds 2 × ante for the call; the round exists.

    v2: the terms the round is played under, from its table at ``table_version`` (ADR 018):
    the dealer and settlement take them from here, so a table changed later changes nothing
    for this round. A v1 record (none of them) is played under the services' settings.
    v3: ``idle_timeout_s``, the table's idle session timeout (ADR 020); a v2 record's session
    takes the dealer's setting."""

    type: Literal["round.bet_placed"] = "round.bet_placed"
    version: Literal[1, 2, 3] = 3
    command_id: Id
    currency: Currency
    mode: Mode = Mode.REAL
    ante: Amount
    aa_bonus: Amount
    call_hold: Amount
    requested_ante: Amount
    requested_aa_bonus: Amount
    adjusted: bool = False  # auto-adjust lowered a bet to the table maximum (or to chips)
    table_id: Id | None = None
    table_version: TableVersion | None = None
    decision_timeout_s: int | None = Field(default=None, ge=1)
    timeout_policy: TimeoutPolicy | None = None
    pay_table: PayTableVersion | None = None
    idle_timeout_s: int | None = Field(default=None, ge=1, le=MAX_IDLE_TIMEOUT_S)


class BetRejected(RoundEvent):
    """v2: Reason gained the table, chip, rebet and mode codes (ADR 018). v3: the operator's
    wallet's refusals of the bet's debit (``OperatorRefusal``: ``limit_exceeded``,
    ``session_expired``, ``player_blocked``, ``operator_rejected``), which v2 folded into
    ``insufficient_funds`` / ``invalid`` (seamless mode, ADR 015). v4: player protection in
    transfer mode (ADR 028): ``limit_reached`` with the ``limit`` it reached, ``reality_check``
    with what the player is reminded of (``reality_check``), ``player_blocked``."""

    type: Literal["round.bet_rejected"] = "round.bet_rejected"
    version: Literal[1, 2, 3, 4] = 4
    command_id: Id
    reason: Reason | OperatorRefusal | ProtectionRefusal
    detail: str = ""
    limit: LimitKind | None = None
    reality_check: RealityCheck | None = None


class Dealt(RoundEvent):
    """Player's hole cards and the flop. Never the dealer's cards, turn or river.

    v2: ``session_id``, the session the round is played in (ADR 020); None for a round at the
    default table (no session) and in a v1 record.
    v3: ``forced``, the round is dealt from a deck an operator forced (test mode, ADR 030)."""

    type: Literal["round.dealt"] = "round.dealt"
    version: Literal[1, 2, 3] = 3
    player_cards: tuple[CardText, CardText]
    flop: tuple[CardText, CardText, CardText]
    commitment: str = Field(pattern=r"^[0-9a-f]{64}$")  # sha256(salt || deck), see holdem.core.deck
    currency: Currency
    mode: Mode = Mode.REAL
    ante: Amount
    aa_bonus: Amount
    session_id: Id | None = None
    forced: bool = False  # v3


class Revealed(RoundEvent):
    """Fields shared by the decision events: the rest of the deal and the deck behind it.
    v2: ``forced``, the deck was forced (test mode, ADR 030), as the round's Dealt says."""

    turn: CardText
    river: CardText
    dealer_cards: tuple[CardText, CardText]
    deck: tuple[CardText, ...] = Field(min_length=52, max_length=52)
    salt: str = Field(pattern=r"^[0-9a-f]{64}$")
    auto: bool = False  # decided by the table's timeout policy, not the player
    command_id: Id | None = None
    forced: bool = False  # v2


class Called(Revealed):
    type: Literal["round.called"] = "round.called"
    version: Literal[1, 2] = 2


class Folded(Revealed):
    type: Literal["round.folded"] = "round.folded"
    version: Literal[1, 2] = 2


class Settled(RoundEvent):
    """The one result of a played round: per-bet returns (stake included, 0 when lost)."""

    type: Literal["round.settled"] = "round.settled"
    version: Literal[1] = 1
    currency: Currency
    mode: Mode = Mode.REAL
    decision: Literal["call", "fold"]
    result: Literal["win", "lose", "push", "fold"]
    dealer_qualifies: bool
    ante: Amount
    aa_bonus: Amount
    call: Amount
    ante_return: Amount
    call_return: Amount
    bonus_return: Amount
    total_return: Amount
    player_category: str
    dealer_category: str
    bonus_category: str
    bonus_class: str
    pay_table: str | None = None  # version of the pay tables applied, e.g. "standard-1"


class Malfunction(RoundEvent):
    """Something went wrong with this round; it must be voided unless it is already settled."""

    type: Literal["round.malfunction"] = "round.malfunction"
    version: Literal[1] = 1
    source: str = Field(max_length=64)  # service, "watchdog" or "operator"
    reason: str = Field(max_length=500)
    command_id: Id | None = None  # the operator's VoidRound behind it, so a resent one is a no-op

    def refuses_settled(self) -> bool:
        """The wallet's refusal of a Settled it could not verify (``causation_id`` names it): a
        statement about one record, not a fault of the round (see ADR 008)."""
        kinds = (SETTLEMENT_MISMATCH, SETTLEMENT_DUPLICATE)
        return self.source == "wallet" and self.reason.startswith(kinds)


class RoundVoided(RoundEvent):
    type: Literal["round.voided"] = "round.voided"
    version: Literal[1] = 1
    malfunction_id: Id
    reason: str = Field(max_length=500)


class CommandRejected(RoundEvent):
    """A Call, Fold or VoidRound the dealer refused; nothing else changed. v2: Reason gained
    the table, chip, rebet and mode codes (ADR 018)."""

    type: Literal["round.command_rejected"] = "round.command_rejected"
    version: Literal[1, 2] = 2
    command_id: Id
    command_type: str
    reason: Reason
    detail: str = ""


class DeckSealed(RoundEvent):
    """Private (vault topic): the deck and salt behind a round's commitment, sealed (AES-GCM).

    v2: ``ciphertext`` is AES-256-GCM of the 52 card codes and the 32-byte salt under the dealer
    key ``key_id``, with the round, player, commitment and key id as associated data, so a record
    opens only for the round it was sealed for. A v1 record (plaintext deck) is refused.
    """

    TOPIC: ClassVar[str] = "vault"
    type: Literal["vault.deck_sealed"] = "vault.deck_sealed"
    version: Literal[2] = 2
    key_id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,32}$")
    nonce: str = Field(pattern=r"^[0-9a-f]{24}$")  # 96 bits, hex
    ciphertext: str = Field(pattern=r"^[0-9a-f]{200}$")  # 84 bytes + 16-byte tag, hex
    commitment: str = Field(pattern=r"^[0-9a-f]{64}$")


def broken_round(source: str) -> Callable[[Context, Any, Exception], list[Malfunction]]:
    """What a service that writes rounds publishes besides the dead letter when its decision on
    a message raised (``Spec.on_failure``): the message's round reported broken, if it names
    one (a failed query never voids a round: the query service writes no rounds)."""

    def malfunction(ctx: Context, message: Any, error: Exception) -> list[Malfunction]:
        if not isinstance(message, Message) or message.round_id is None:
            return []
        return [
            Malfunction(
                **ctx.envelope(message.player_id, message.round_id),
                source=source,
                reason=f"processing_failed: {type(error).__name__}",
            )
        ]

    return malfunction
