"""The seamless wallet bridge (ADR 015): the wallet asks the operator's wallet to move money on
``holdem.wallet`` (its record of the bridge, in one order with the answers it accepted there),
and the operator answers on ``holdem.seamless.replies``. Every topic is keyed by player_id.

A round has at most three transactions, each with a stable id derived from (player, round, kind):
one debit (ante + AA Bonus + the call hold) before the round exists, then either one credit
(payout + the unused call hold, even 0) or one rollback (of the whole debit). A request is sent
again with the same ``tx_id`` until it is answered: the operator must apply a ``tx_id`` once.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Literal

from pydantic import Field

from holdem.core.contracts.base import Amount, Balance, Currency, Id, Message, Mode, Timestamp
from holdem.core.contracts.tables import (
    MAX_IDLE_TIMEOUT_S,
    PayTableVersion,
    TableVersion,
    TimeoutPolicy,
)
from holdem.core.contracts.wallet import Fingerprint, WalletEvent


class SeamlessRequest(Message):
    """Wallet → operator: move ``amount`` for ``round_id`` once, whatever the number of sends."""

    TOPIC: ClassVar[str] = "wallet"
    round_id: Id
    tx_id: Id
    currency: Currency
    mode: Mode = Mode.REAL
    amount: Amount


class DebitRequested(SeamlessRequest):
    """Take the round's stakes from the player: ante + AA Bonus + call hold (2 × ante), as the
    table admitted them. Unanswered by ``expires_at``, the wallet rolls it back.

    v2: ``idle_timeout_s``, the table's idle session timeout, pinned like the decision timeout
    and carried to the BetPlaced (v3) placed once debited, whose session the dealer times by it
    (ADR 020). A v1 record has none: that session takes the dealer's setting.
    v3: ``campaign_id``, a free hand's campaign (ADR 029): the promotion paid ante and AA Bonus,
    so ``amount`` is the call hold alone, the player's part."""

    type: Literal["seamless.debit_requested"] = "seamless.debit_requested"
    version: Literal[1, 2, 3] = 3
    ante: Amount
    aa_bonus: Amount
    call_hold: Amount
    # The PlaceBet behind it: the wallet places the bet from these once debited.
    command_id: Id
    requested_ante: Amount
    requested_aa_bonus: Amount
    fingerprint: Fingerprint  # the wallet's digest of the PlaceBet (recognises a resend)
    expires_at: Timestamp
    # The table version the bet was admitted at, as its BetPlaced will pin it (none: the
    # deployment's default table).
    table_id: Id | None = None
    table_version: TableVersion | None = None
    decision_timeout_s: int | None = Field(default=None, ge=1)
    timeout_policy: TimeoutPolicy | None = None
    pay_table: PayTableVersion | None = None
    idle_timeout_s: int | None = Field(default=None, ge=1, le=MAX_IDLE_TIMEOUT_S)
    campaign_id: Id | None = None


class CreditRequested(SeamlessRequest):
    """Pay the player what the round returned plus the call hold it did not use (0 included:
    the operator's books close every settled round). v2: ``campaign_id``, a free hand's (its
    winnings only, ADR 029)."""

    type: Literal["seamless.credit_requested"] = "seamless.credit_requested"
    version: Literal[1, 2] = 2
    debit_tx_id: Id
    campaign_id: Id | None = None


class RollbackRequested(SeamlessRequest):
    """Cancel the debit ``debit_tx_id``: the round was voided, or its debit was not answered in
    time. The operator reverses it if it applied it, and refuses it forever if it did not.
    v2: ``campaign_id``, a free hand's (ADR 029)."""

    type: Literal["seamless.rollback_requested"] = "seamless.rollback_requested"
    version: Literal[1, 2] = 2
    debit_tx_id: Id
    campaign_id: Id | None = None


class ReplyRefusal(StrEnum):
    UNKNOWN_TRANSACTION = "unknown_transaction"  # no such tx_id outstanding for this player
    MISMATCH = "mismatch"  # round, amount or currency differ from the request
    SUPERSEDED = "superseded"  # e.g. a Debited after the wallet asked for its rollback


class ReplyRefused(Message):
    """Wallet → operator: a reply that moved nothing, and why (nothing is trusted because it
    arrived on the replies topic)."""

    TOPIC: ClassVar[str] = "wallet"
    type: Literal["seamless.reply_refused"] = "seamless.reply_refused"
    version: Literal[1] = 1
    reply_id: Id  # the refused reply's event_id
    reply_type: str
    tx_id: Id
    reason: ReplyRefusal
    detail: str = ""


class SeamlessReply(Message):
    """Operator → wallet: the answer to the request ``tx_id`` (same round, amount, currency)."""

    TOPIC: ClassVar[str] = "seamless_replies"
    round_id: Id
    tx_id: Id
    currency: Currency
    amount: Amount
    balance: Balance | None = None  # the player's balance at the operator after it, if shared


class Debited(SeamlessReply):
    type: Literal["seamless.debited"] = "seamless.debited"
    version: Literal[1] = 1


# The wallet maps each one to one to a BetRejected v3 reason (``other``: operator_rejected).
class DebitRejection(StrEnum):
    """Why an operator refuses a debit: stable codes the wallet maps to a BetRejected."""

    INSUFFICIENT_FUNDS = "insufficient_funds"
    LIMIT_EXCEEDED = "limit_exceeded"  # a responsible-gaming or loss limit
    SESSION_EXPIRED = "session_expired"
    PLAYER_BLOCKED = "player_blocked"
    OTHER = "other"


class DebitRejected(SeamlessReply):
    type: Literal["seamless.debit_rejected"] = "seamless.debit_rejected"
    version: Literal[1] = 1
    reason: DebitRejection
    detail: str = ""


class Credited(SeamlessReply):
    type: Literal["seamless.credited"] = "seamless.credited"
    version: Literal[1] = 1


class RolledBack(SeamlessReply):
    type: Literal["seamless.rolled_back"] = "seamless.rolled_back"
    version: Literal[1] = 1


class SeamlessMove(WalletEvent):
    """The wallet's record of an operator's answer it accepted; its ledger account is then
    money in transit: a debit puts the stakes in, a credit or rollback takes what is owed out."""

    tx_id: Id


class SeamlessDebited(SeamlessMove):
    type: Literal["wallet.seamless_debited"] = "wallet.seamless_debited"
    version: Literal[1] = 1


class SeamlessCredited(SeamlessMove):
    type: Literal["wallet.seamless_credited"] = "wallet.seamless_credited"
    version: Literal[1] = 1


class SeamlessRolledBack(SeamlessMove):
    """``amount`` is what the debit had put in (0 if the debit was never applied here)."""

    type: Literal["wallet.seamless_rolled_back"] = "wallet.seamless_rolled_back"
    version: Literal[1] = 1


class RoundClosedNotice(SeamlessRequest):
    """Wallet → operator: the round takes no more money movements (ADR 028), sent once after
    the operator acknowledged its credit or rollback; it moves nothing. ``amount``: that last
    transaction's (``final_tx_id``); ``transactions``: the round's debit and that one."""

    type: Literal["seamless.round_closed"] = "seamless.round_closed"
    version: Literal[1] = 1
    outcome: Literal["settled", "voided"]
    debit_tx_id: Id
    final_tx_id: Id


class RoundClosedAcknowledged(SeamlessReply):
    """Operator → wallet: the round-closed notice ``tx_id`` was received (same amount)."""

    type: Literal["seamless.round_closed_acknowledged"] = "seamless.round_closed_acknowledged"
    version: Literal[1] = 1


SEAMLESS_REQUESTS = (
    DebitRequested,
    CreditRequested,
    RollbackRequested,
    ReplyRefused,
    RoundClosedNotice,
)
SEAMLESS_REPLIES = (Debited, DebitRejected, Credited, RolledBack, RoundClosedAcknowledged)
SEAMLESS_MOVES = (SeamlessDebited, SeamlessCredited, SeamlessRolledBack)
__all__ = [
    "SEAMLESS_MOVES",
    "SEAMLESS_REPLIES",
    "SEAMLESS_REQUESTS",
    "CreditRequested",
    "Credited",
    "DebitRejected",
    "DebitRejection",
    "DebitRequested",
    "Debited",
    "ReplyRefusal",
    "ReplyRefused",
    "RollbackRequested",
    "RolledBack",
    "RoundClosedAcknowledged",
    "RoundClosedNotice",
    "SeamlessCredited",
    "SeamlessDebited",
    "SeamlessMove",
    "SeamlessReply",
    "SeamlessRequest",
    "SeamlessRolledBack",
]
