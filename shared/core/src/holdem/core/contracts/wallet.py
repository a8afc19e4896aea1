"""Wallet (ledger) events on ``holdem.wallet``: every money movement, with the balance after it."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import StringConstraints

from holdem.core.contracts.base import Amount, Balance, Currency, Id, Message, Mode, Reason

# A digest of a command's body (holdem.wallet.idempotency.fingerprint): after a restart the wallet
# tells a resent command (same id, same body) from a reused command_id with another body.
Fingerprint = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]


class WalletEvent(Message):
    TOPIC: ClassVar[str] = "wallet"
    idempotency_key: Id  # derived from the cause; a key is applied once, ever
    currency: Currency
    mode: Mode = Mode.REAL
    amount: Amount
    available: Balance  # the player's balances after this movement
    held: Balance
    command_id: Id | None = None  # the command behind a deposit, withdrawal or stake
    fingerprint: Fingerprint | None = None


class FundsDeposited(WalletEvent):
    type: Literal["wallet.deposited"] = "wallet.deposited"
    version: Literal[1] = 1


class FundsWithdrawn(WalletEvent):
    type: Literal["wallet.withdrawn"] = "wallet.withdrawn"
    version: Literal[1] = 1


class RoundMovement(WalletEvent):
    """A movement of a round's money after its stakes. v2: ``campaign_id``, the free-hand
    campaign that funded the round's stakes (ADR 029); None for a round the player paid."""

    campaign_id: Id | None = None


class StakeTaken(WalletEvent):
    """Ante + AA Bonus moved from the player to the house for ``round_id``."""

    type: Literal["wallet.stake_taken"] = "wallet.stake_taken"
    version: Literal[1] = 1
    ante: Amount
    aa_bonus: Amount


class CallHeld(RoundMovement):
    type: Literal["wallet.call_held"] = "wallet.call_held"
    version: Literal[1, 2] = 2


class CallCaptured(RoundMovement):
    type: Literal["wallet.call_captured"] = "wallet.call_captured"
    version: Literal[1, 2] = 2


class CallReleased(RoundMovement):
    type: Literal["wallet.call_released"] = "wallet.call_released"
    version: Literal[1, 2] = 2


class PayoutCredited(RoundMovement):
    type: Literal["wallet.payout_credited"] = "wallet.payout_credited"
    version: Literal[1, 2] = 2


class StakesRefunded(RoundMovement):
    """A voided round: every stake taken (and a captured call) back to the player."""

    type: Literal["wallet.stakes_refunded"] = "wallet.stakes_refunded"
    version: Literal[1, 2] = 2


class WalletRejected(Message):
    """A command the wallet refused; no money moved. v2: Reason gained the table, chip, rebet
    and mode codes (ADR 018)."""

    TOPIC: ClassVar[str] = "wallet"
    type: Literal["wallet.rejected"] = "wallet.rejected"
    version: Literal[1, 2] = 2
    command_id: Id
    command_type: str
    reason: Reason
    detail: str = ""
    fingerprint: Fingerprint | None = None
