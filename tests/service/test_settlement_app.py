"""The settlement service on the in-memory transport: rounds in, one Settled or RoundVoided out."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from prometheus_client import CollectorRegistry
from support.deciders import types_of
from support.memory import Log, started
from support.rounds import RoundEvents
from support.wallet import forged_settled

from holdem.core.contracts import ContractError, Message, RoundVoided, Settled, dump, parse
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport
from holdem.settlement.app import create_app
from holdem.settlement.settings import SettlementSettings

ROUND = RoundEvents()  # As Ad vs 7c 2d on Ah Ks 9d 4c 3h: ante 10 + call 20 + bonus 5 return 80


@dataclass
class Harness:
    service: ServiceApp
    log: Log
    registry: CollectorRegistry
    fed: set[str] = field(default_factory=set)

    @property
    def rounds(self) -> list[Message]:
        """Every readable record on the rounds topic, in the order written."""
        found = []
        for raw in self.log.values("rounds"):
            with contextlib.suppress(ContractError):  # the unreadable-record test sends one
                found.append(parse("rounds", raw))
        return found

    async def feed(self, *events: Message) -> None:
        """Publish events on the rounds topic as wallet and dealer would (written together),
        then wait until everything they cause is committed."""
        topic = self.log.topic("rounds")
        for event in events:
            self.fed.add(event.event_id)
            await self.log.transport.publish(topic, dump(event), key=event.player_id.encode())
        await self.log.transport.settle()

    def published(self) -> list[Message]:
        """What settlement itself put on the rounds topic (events it did not receive from us)."""
        return [e for e in self.rounds if e.event_id not in self.fed]

    def metric(self, name: str, **labels: str) -> float:
        return self.registry.get_sample_value(name, labels) or 0.0


@pytest.fixture
async def settlement() -> AsyncIterator[Harness]:
    registry = CollectorRegistry()
    settings = SettlementSettings(topic_prefix="t1", metrics_port=0)
    transport = MemoryTransport()
    service = create_app(settings, transport=transport, registry=registry)
    async with started(service, transport) as log:
        yield Harness(service, log, registry)


async def test_a_called_round_is_settled_once_on_the_prefixed_rounds_topic(
    settlement: Harness,
) -> None:
    await settlement.feed(*ROUND.played())

    [settled] = settlement.published()
    assert isinstance(settled, Settled)
    assert (settled.result, settled.total_return) == ("win", 80)
    assert settlement.service.processor.topics.rounds == "t1.holdem.rounds"
    assert settlement.service.processor.state_for("p1").round("p1", "r1").status == "settled"
    assert settlement.metric("holdem_rounds_total", outcome="win") == 1
    assert settlement.metric("holdem_returned_minor_total", bet="aa_bonus", currency="EUR") == 40
    assert settlement.metric("holdem_open_rounds", service="settlement") == 0


async def test_a_redelivered_decision_is_not_settled_twice(settlement: Harness) -> None:
    await settlement.feed(*ROUND.played(), ROUND.called(), ROUND.called())

    assert types_of(settlement.published()) == ["round.settled"]
    assert settlement.metric("holdem_rejected_total", service="settlement", reason="malformed") == 0


async def test_a_round_with_a_malfunction_before_the_decision_is_voided_not_settled(
    settlement: Harness,
) -> None:
    await settlement.feed(ROUND.bet_placed(), ROUND.dealt(), ROUND.malfunction("m1"))
    assert settlement.published() == []  # undecided: the dealer's to void

    await settlement.feed(ROUND.called())
    [voided] = settlement.published()
    assert isinstance(voided, RoundVoided)
    assert voided.malfunction_id == ROUND.malfunction("m1").event_id


async def test_a_malfunction_after_settlement_is_only_counted(settlement: Harness) -> None:
    await settlement.feed(*ROUND.played(), ROUND.malfunction("late"))

    assert types_of(settlement.published()) == ["round.settled"]
    assert settlement.metric("holdem_rejected_total", service="settlement", reason="malformed") == 0
    assert settlement.metric("holdem_malfunction_after_settlement_total") == 1


async def test_a_deck_that_does_not_verify_gets_a_malfunction_and_a_void(
    settlement: Harness,
) -> None:
    other_salt = ROUND.called(salt="cd" * 32)
    await settlement.feed(ROUND.bet_placed(), ROUND.dealt(), other_salt)

    # In decide's order, in one transaction (the one-record in-memory broker could reorder them).
    assert types_of(settlement.published()) == ["round.malfunction", "round.voided"]
    assert settlement.service.processor.state_for("p1").round("p1", "r1").status == "voided"
    assert settlement.metric("holdem_rounds_total", outcome="voided") == 1


async def test_an_open_round_shows_in_the_open_rounds_gauge(settlement: Harness) -> None:
    await settlement.feed(ROUND.bet_placed(), ROUND.dealt())

    assert settlement.metric("holdem_open_rounds", service="settlement") == 1


async def test_an_unreadable_rounds_record_is_skipped_without_blocking_the_next(
    settlement: Harness,
) -> None:
    await settlement.log.publish("rounds", b"{not json", b"p1")
    await settlement.feed(*ROUND.played())

    assert types_of(settlement.published()) == ["round.settled"]
    assert settlement.metric("holdem_rejected_total", service="settlement", reason="malformed") == 0


async def test_a_forged_settled_neither_ends_the_round_nor_pages_as_a_late_malfunction(
    settlement: Harness,
) -> None:
    forged = forged_settled("p1", "r1", "p1.r1.forged", aa_bonus=5)
    refusal = ROUND.malfunction(
        "refusal",
        source="wallet",
        reason="settlement_mismatch: differs",
        causation_id=forged.event_id,
    )
    await settlement.feed(ROUND.bet_placed(), ROUND.dealt(), forged, refusal, ROUND.called())

    [settled] = settlement.published()
    assert isinstance(settled, Settled) and settled.total_return == 80
    await settlement.feed(forged, refusal)  # again, after the genuine result
    assert settlement.published() == [settled]
    assert settlement.metric("holdem_malfunction_after_settlement_total") == 0


async def test_its_own_settled_refused_by_the_wallet_is_voided(settlement: Harness) -> None:
    await settlement.feed(*ROUND.played())
    [settled] = settlement.published()
    refusal = ROUND.malfunction(
        "refusal",
        source="wallet",
        reason="settlement_mismatch: differs",
        causation_id=settled.event_id,
    )
    await settlement.feed(refusal, refusal)

    assert types_of(settlement.published()) == ["round.settled", "round.voided"]
    assert settlement.service.processor.state_for("p1").round("p1", "r1").status == "voided"
