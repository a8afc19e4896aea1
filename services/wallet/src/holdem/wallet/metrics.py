"""The wallet's own counters (names are a contract with deploy/prometheus and Grafana): its
refusals (of protection by limit), the Settled records it would not pay, and the promotion
account's money (ADR 029). The runtime counts the pipeline."""

from __future__ import annotations

from holdem.core.contracts import (
    BetRejected,
    Envelope,
    Malfunction,
    OperatorRefusal,
    PayoutCredited,
    ProtectionRefusal,
    WalletRejected,
)
from holdem.core.contracts.promotions import (
    FreeStakeRefunded,
    FreeStakeTaken,
    PromoCredited,
    PromoRejected,
)
from holdem.runtime.metrics import GameCounters, Metrics

NAME = "wallet"


class WalletCounters(GameCounters):
    """Counted from what the wallet publishes (``Spec.counters``), in either mode."""

    def __init__(self, metrics: Metrics) -> None:
        counter = metrics.counter
        self.rejected = metrics.rejected
        self.protection_refusals = counter(
            "holdem_protection_refusals",
            "Bets refused to protect the player (ADR 028), by reason and by limit reached",
            ["reason", "limit"],
        )
        self.settlement_mismatch = counter(
            "holdem_settlement_mismatch",
            "Settled records the wallet refused to pay, by reason (mismatch, duplicate)",
            ["reason"],
        )
        # Promotions (ADR 029): what the promotion account paid, by kind (credit, free_stake),
        # what voids gave back to it, the free hands played and what they paid the players.
        self.free_hands = counter(
            "holdem_free_hands_played", "Free hands started (their stakes paid)", ["currency"]
        )
        self.promo_paid = counter(
            "holdem_promo_paid_minor",
            "Promotion money paid: credits and free hands' stakes, minor units",
            ["kind", "currency"],
        )
        self.promo_refunded = counter(
            "holdem_promo_refunded_minor",
            "Free hands' stakes back to the promotion (voided rounds), minor units",
            ["currency"],
        )
        self.free_hand_payouts = counter(
            "holdem_free_hand_payouts_minor",
            "Paid to players for free hands (winnings and the call's return), minor units",
            ["currency"],
        )

    def observe(self, event: Envelope) -> None:
        if isinstance(event, Malfunction) and event.refuses_settled():
            self.settlement_mismatch.labels(
                event.reason.split(":")[0].removeprefix("settlement_")
            ).inc()
        elif isinstance(event, PromoCredited | FreeStakeTaken | FreeStakeRefunded | PayoutCredited):
            self._observe_promotion(event)
        elif isinstance(event, WalletRejected) and event.command_type == "command.place_bet":
            return  # the same refusal is counted once, as its BetRejected
        elif isinstance(event, BetRejected | WalletRejected | PromoRejected):
            self.rejected.labels(NAME, event.reason.value).inc()
            if isinstance(event, BetRejected | PromoRejected) and _protects(event):
                limit = "" if event.limit is None else event.limit.value
                self.protection_refusals.labels(event.reason.value, limit).inc()

    def _observe_promotion(
        self, event: PromoCredited | FreeStakeTaken | FreeStakeRefunded | PayoutCredited
    ) -> None:
        currency = event.currency
        if isinstance(event, PromoCredited):
            self.promo_paid.labels("credit", currency).inc(event.amount)
        elif isinstance(event, FreeStakeTaken):
            self.free_hands.labels(currency).inc()
            self.promo_paid.labels("free_stake", currency).inc(event.amount)
        elif isinstance(event, FreeStakeRefunded):
            self.promo_refunded.labels(currency).inc(event.amount)
        elif event.campaign_id is not None:
            self.free_hand_payouts.labels(currency).inc(event.amount)


def _protects(event: BetRejected | PromoRejected) -> bool:
    """A refusal of the wallet's player protection, of a bet or of a free hand (ADR 028; the
    operator's wallet's own refusals of a seamless debit say ``operator wallet`` first: those
    are the operator's to count)."""
    if isinstance(event.reason, ProtectionRefusal):
        return True
    blocked = event.reason is OperatorRefusal.PLAYER_BLOCKED
    return blocked and not event.detail.startswith("operator wallet")
