"""Promotions (ADR 029): promotional credits and free-hand campaigns.

The operator's commands go on ``holdem.commands`` keyed by the player (the player's wallet
partition owns his campaigns and his money); the wallet's answers go on ``holdem.wallet``.
Promotion money is an account of its own: every movement it funds names its campaign.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Literal

from pydantic import Field

from holdem.core.contracts.base import (
    Amount,
    Command,
    Currency,
    Id,
    LimitKind,
    Message,
    OperatorRefusal,
    PositiveAmount,
    ProtectionRefusal,
    RealityCheck,
    Reason,
    Timestamp,
)
from holdem.core.contracts.wallet import Fingerprint, WalletEvent

MAX_FREE_HANDS = 1_000  # hands one grant may give: anything more is a typo, not a promotion


class PromoReason(StrEnum):
    """Why the wallet refused a promotion command (next to the ``Reason`` codes it shares)."""

    UNKNOWN_CAMPAIGN = "unknown_campaign"  # the player has no such campaign
    CAMPAIGN_EXISTS = "campaign_exists"  # a grant reusing a campaign id of the player's
    CAMPAIGN_EXPIRED = "campaign_expired"
    CAMPAIGN_CANCELLED = "campaign_cancelled"
    NO_FREE_HANDS = "no_free_hands"  # every hand of the campaign was played
    TOO_MANY_CAMPAIGNS = "too_many_campaigns"  # the player's open campaigns are at their bound
    NOT_SUPPORTED = "not_supported"  # a promotional credit in seamless mode (ADR 029)


class CreditPromo(Command):
    """Credit the player ``amount`` of promotion money outside any round (a compensation, a
    tournament prize); real money, once per ``command_id``."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.credit_promo"] = "command.credit_promo"
    version: Literal[1] = 1
    currency: Currency
    amount: PositiveAmount
    campaign_id: Id
    reason: str = Field(min_length=1, max_length=200)


class GrantFreeHands(Command):
    """Give the player ``hands`` free hands at ``table_id``, each with this fixed ante and AA
    Bonus, playable until ``expires_at``. ``campaign_id`` names the grant for the player."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.grant_free_hands"] = "command.grant_free_hands"
    version: Literal[1] = 1
    campaign_id: Id
    table_id: Id
    hands: int = Field(strict=True, ge=1, le=MAX_FREE_HANDS)
    ante: PositiveAmount
    aa_bonus: Amount = 0
    expires_at: Timestamp


class CancelFreeHands(Command):
    """End the player's campaign now: its unplayed hands are gone (a hand in play finishes)."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.cancel_free_hands"] = "command.cancel_free_hands"
    version: Literal[1] = 1
    campaign_id: Id


class PlayFreeHand(Command):
    """Start round ``round_id`` with one free hand of the campaign: the campaign's ante and AA
    Bonus are the promotion's, the call (2 × ante) is the player's own money."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.play_free_hand"] = "command.play_free_hand"
    version: Literal[1] = 1
    round_id: Id
    campaign_id: Id


class PromoCredited(WalletEvent):
    """Promotion money credited to the player's available balance."""

    type: Literal["wallet.promo_credited"] = "wallet.promo_credited"
    version: Literal[1] = 1
    campaign_id: Id
    reason: str = Field(max_length=200)


class FreeStakeTaken(WalletEvent):
    """The stakes of a free hand (ante + AA Bonus), paid to the house by the promotion: the
    player's balances do not move (``amount`` is what the promotion paid)."""

    type: Literal["wallet.free_stake_taken"] = "wallet.free_stake_taken"
    version: Literal[1] = 1
    campaign_id: Id
    ante: Amount
    aa_bonus: Amount


class FreeStakeRefunded(WalletEvent):
    """A voided free hand: its stakes go back to the promotion, the hand to the campaign."""

    type: Literal["wallet.free_stake_refunded"] = "wallet.free_stake_refunded"
    version: Literal[1] = 1
    campaign_id: Id


class CampaignEvent(Message):
    """A change of one of the player's free-hand campaigns (no money moves)."""

    TOPIC: ClassVar[str] = "wallet"
    campaign_id: Id


class FreeHandsGranted(CampaignEvent):
    type: Literal["wallet.free_hands_granted"] = "wallet.free_hands_granted"
    version: Literal[1] = 1
    command_id: Id
    fingerprint: Fingerprint
    table_id: Id
    currency: Currency
    hands: int = Field(strict=True, ge=1, le=MAX_FREE_HANDS)
    ante: Amount
    aa_bonus: Amount
    expires_at: Timestamp


class FreeHandsCancelled(CampaignEvent):
    type: Literal["wallet.free_hands_cancelled"] = "wallet.free_hands_cancelled"
    version: Literal[1] = 1
    command_id: Id
    fingerprint: Fingerprint
    remaining: int = Field(strict=True, ge=0, le=MAX_FREE_HANDS)  # hands given up


class FreeHandsExpired(CampaignEvent):
    type: Literal["wallet.free_hands_expired"] = "wallet.free_hands_expired"
    version: Literal[1] = 1
    remaining: int = Field(strict=True, ge=0, le=MAX_FREE_HANDS)  # hands never played


class PromoRejected(Message):
    """A promotion command the wallet refused; nothing moved. A refused PlayFreeHand carries
    its ``round_id`` (the round that did not start).

    v2: player protection (ADR 028) refuses a PlayFreeHand as it refuses a bet:
    ``player_blocked``, ``limit_reached`` with the ``limit`` it reached, ``reality_check`` with
    what the player is reminded of (``reality_check``)."""

    TOPIC: ClassVar[str] = "wallet"
    type: Literal["wallet.promo_rejected"] = "wallet.promo_rejected"
    version: Literal[1, 2] = 2
    command_id: Id
    command_type: str = Field(max_length=64)
    campaign_id: Id
    reason: Reason | PromoReason | OperatorRefusal | ProtectionRefusal
    detail: str = Field(default="", max_length=500)
    fingerprint: Fingerprint
    limit: LimitKind | None = None
    reality_check: RealityCheck | None = None


PROMO_COMMANDS: tuple[type[Command], ...] = (
    CreditPromo,
    GrantFreeHands,
    CancelFreeHands,
    PlayFreeHand,
)
PROMO_MOVES: tuple[type[WalletEvent], ...] = (PromoCredited, FreeStakeTaken, FreeStakeRefunded)
CAMPAIGN_EVENTS: tuple[type[CampaignEvent], ...] = (
    FreeHandsGranted,
    FreeHandsCancelled,
    FreeHandsExpired,
)
