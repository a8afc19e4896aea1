"""Prometheus metrics of the game (names are a contract with deploy/prometheus and Grafana)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from holdem.core import manifest
from holdem.core.contracts import (
    BetRejected,
    CommandRejected,
    Envelope,
    Malfunction,
    MessageRejected,
    Mode,
    OperatorRefusal,
    PayoutCredited,
    ProtectionRefusal,
    RoundVoided,
    Settled,
    WalletRejected,
)
from holdem.core.contracts.promotions import (
    FreeStakeRefunded,
    FreeStakeTaken,
    PromoCredited,
    PromoRejected,
)


class Metrics:
    """The domain metrics of one process; every service registers the same families."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        def counter(name: str, doc: str, labels: Iterable[str]) -> Counter:
            return Counter(name, doc, list(labels), registry=registry)

        self.rounds = counter("holdem_rounds", "Rounds ended, by outcome", ["outcome"])
        self.wagered = counter(
            "holdem_wagered_minor", "Stakes settled, minor units", ["bet", "currency"]
        )
        self.returned = counter(
            "holdem_returned_minor", "Returns paid incl. stake, minor units", ["bet", "currency"]
        )
        self.voids = counter("holdem_voids", "Rounds voided, by reason", ["reason"])
        self.rejected = counter("holdem_rejected", "Inputs refused", ["service", "reason"])
        self.dead_letters = counter(
            "holdem_dead_letters",
            "Records put on the dead-letter topic (unreadable, refused or failed), by reason",
            ["service", "reason"],
        )
        self.protection_refusals = counter(
            "holdem_protection_refusals",
            "Bets refused to protect the player (ADR 028), by reason and by limit reached",
            ["reason", "limit"],
        )
        self.published = counter("holdem_events_published", "Events published", ["service", "type"])
        self.late_malfunctions = counter(
            "holdem_malfunction_after_settlement", "Malfunctions for settled rounds", []
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
        self.open_rounds = Gauge(
            "holdem_open_rounds", "Rounds not yet ended", ["service"], registry=registry
        )
        self.latency = Histogram(
            "holdem_command_latency_seconds",
            "From an input's occurred_at to its events being published",
            ["service", "type"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=registry,
        )
        self.replay_duration = Histogram(
            "holdem_replay_duration_seconds",
            "Time to rebuild state from the log",
            ["service"],
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120),
            registry=registry,
        )
        self.replay_events = counter(
            "holdem_replay_events", "Events folded in replays", ["service"]
        )
        self.records = counter(
            "holdem_records_consumed",
            "Records read from input topics (skipped ones too)",
            ["service"],
        )
        self.batches = counter("holdem_batches", "Poll batches committed", ["service"])
        self.snapshots = counter("holdem_snapshots", "Partition snapshots written", ["service"])
        self.snapshot_failures = counter(
            "holdem_snapshot_failures",
            "Snapshots that could not be loaded (full replay)",
            ["service"],
        )
        self.lag = Gauge(
            "holdem_consumer_lag",
            "Records behind the partition end",
            ["service", "topic", "partition"],
            registry=registry,
        )
        # Read at each scrape (Gauge.set_function): what a container's health check asks.
        self.ready = Gauge(
            "holdem_ready",
            "1 when this instance decides: a member of its group, the state of every assigned "
            "partition rebuilt",
            ["service"],
            registry=registry,
        )
        self.build_info = Gauge(
            "holdem_build_info",
            "1, labelled with the release and the digest of its certified parts' manifest "
            "(holdem.core.manifest: what decides an outcome)",
            ["service", "version", "manifest"],
            registry=registry,
        )

    def announce_build(self, service: str) -> None:
        """Set ``holdem_build_info`` for ``service``: which certified build this process runs."""
        self.build_info.labels(
            service, manifest.release_version(), manifest.installed_digest()
        ).set(1)

    def observe(
        self, service: str, cause: Envelope, events: Iterable[Envelope], now: datetime
    ) -> None:
        """Count what one decision published, and its latency from the input."""
        if self.observe_events(service, events):
            seconds = (now - cause.occurred_at).total_seconds()  # type: ignore[attr-defined]
            self.latency.labels(service, cause.type).observe(max(seconds, 0.0))  # type: ignore[attr-defined]

    def observe_events(self, service: str, events: Iterable[Envelope]) -> bool:
        """Count published events (also those of periodic decisions); True if there were any."""
        any_event = False
        for event in events:
            any_event = True
            self.published.labels(service, event.type).inc()  # type: ignore[attr-defined]
            self._observe_domain(service, event)
        return any_event

    def _observe_domain(self, service: str, event: Envelope) -> None:
        if isinstance(event, Settled) and event.mode is Mode.FUN:
            return  # play money: never in the rounds, stakes, returns or RTP (ADR 018)
        if isinstance(event, Settled):
            self.rounds.labels(event.result).inc()
            for bet, stake, ret in (
                ("ante", event.ante, event.ante_return),
                ("call", event.call, event.call_return),
                ("aa_bonus", event.aa_bonus, event.bonus_return),
            ):
                self.wagered.labels(bet, event.currency).inc(stake)
                self.returned.labels(bet, event.currency).inc(ret)
        elif isinstance(event, RoundVoided):
            self.rounds.labels("voided").inc()
            self.voids.labels(event.reason.split(":")[0][:40]).inc()
        elif isinstance(event, Malfunction) and event.refuses_settled():
            self.settlement_mismatch.labels(
                event.reason.split(":")[0].removeprefix("settlement_")
            ).inc()
        elif isinstance(event, PromoCredited | FreeStakeTaken | FreeStakeRefunded | PayoutCredited):
            self._observe_promotion(event)
        elif isinstance(event, WalletRejected) and event.command_type == "command.place_bet":
            return  # the same refusal is counted once, as its BetRejected
        elif isinstance(
            event, BetRejected | CommandRejected | WalletRejected | MessageRejected | PromoRejected
        ):
            self.rejected.labels(service, event.reason.value).inc()
            if isinstance(event, BetRejected | PromoRejected) and _protects(event):
                limit = "" if event.limit is None else event.limit.value
                self.protection_refusals.labels(event.reason.value, limit).inc()
            if isinstance(event, MessageRejected):
                self.dead_letters.labels(service, event.reason.value).inc()

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
