"""The dealer service on the in-memory transport: bets dealt, commands answered, timeouts."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from prometheus_client import CollectorRegistry
from support.dealer import GAME, VAULT, VAULT_KEYS, call, void_round
from support.deciders import NOW
from support.memory import Log, started

from holdem.core.cards import Card
from holdem.core.contracts import (
    Called,
    CommandRejected,
    ContractError,
    Dealt,
    DeckSealed,
    Folded,
    Message,
    MessageRejected,
    Reason,
    RoundVoided,
    dump,
    parse,
)
from holdem.core.deck import verify_commitment
from holdem.dealer.app import create_app
from holdem.dealer.settings import DealerSettings
from holdem.dealer.vault import Vault, VaultError
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport


@dataclass
class Harness:
    service: ServiceApp
    registry: CollectorRegistry
    log: Log | None = None
    now: datetime = NOW

    @property
    def raw(self) -> dict[str, list[bytes]]:
        """The values on the dealer's topics, in the order they were written."""
        assert self.log is not None
        return {role: self.log.values(role) for role in ("rounds", "vault", "rejected")}

    async def send(self, role: str, *messages: Message | bytes) -> None:
        """Publish on topic ``role`` as the operator or the wallet would, then deliver outputs."""
        assert self.log is not None
        for message in messages:
            raw = message if isinstance(message, bytes) else dump(message)
            key = b"p1" if isinstance(message, bytes) else message.player_id.encode()
            await self.log.publish(role, raw, key)

    async def tick(self, seconds: float) -> None:
        assert self.log is not None
        self.now = NOW + timedelta(seconds=seconds)
        await self.service.processor.run_tick()
        await self.log.transport.settle()

    def on(self, role: str, *kinds: type) -> list[Message]:
        """The records on topic ``role`` that parse as one of ``kinds``."""
        out = []
        for raw in self.raw[role]:
            with contextlib.suppress(ContractError):
                out.append(parse(role, raw))
        return [m for m in out if isinstance(m, kinds)]


@pytest.fixture
async def dealer() -> AsyncIterator[Harness]:
    registry = CollectorRegistry()
    settings = DealerSettings(topic_prefix="t1", metrics_port=0, dealer_vault_keys=VAULT_KEYS)
    transport = MemoryTransport()
    service = create_app(
        settings, transport=transport, registry=registry, new_deck=lambda: (GAME.deck, GAME.salt)
    )
    harness = Harness(service, registry)
    service.processor.clock = lambda: harness.now
    async with started(service, transport) as log:
        harness.log = log
        yield harness


async def test_a_placed_bet_is_sealed_in_the_vault_and_dealt_without_the_hidden_cards(
    dealer: Harness,
) -> None:
    await dealer.send("rounds", GAME.bet_placed())

    [sealed] = dealer.on("vault", DeckSealed)
    [dealt] = dealer.on("rounds", Dealt)
    assert isinstance(sealed, DeckSealed) and isinstance(dealt, Dealt)
    assert sealed.commitment == dealt.commitment == GAME.commitment
    dealt_raw = next(raw for raw in dealer.raw["rounds"] if b"round.dealt" in raw)
    assert not any(card.encode() in dealt_raw for card in ("7c", "2d", "4c", "3h"))
    assert b"vault" not in b"".join(dealer.raw["rounds"])


async def test_a_reader_of_the_vault_without_the_dealer_key_learns_nothing(
    dealer: Harness,
) -> None:
    await dealer.send("rounds", GAME.bet_placed())

    [raw] = dealer.raw["vault"]
    assert not set(re.findall(r"\b[2-9TJQKA][cdhs]\b", raw.decode()))
    assert GAME.salt.hex().encode() not in raw and bytes(GAME.deck) not in raw
    record = parse("vault", raw)
    with pytest.raises(VaultError):
        Vault({record.key_id: bytes(32)}, record.key_id).open(record)
    with pytest.raises(VaultError):  # the same record re-keyed to another of the player's rounds
        VAULT.open(record.model_copy(update={"round_id": "r2"}))


async def test_a_dealer_that_cannot_open_its_vault_refuses_to_rebuild_its_state(
    dealer: Harness,
) -> None:
    await dealer.send("rounds", GAME.bet_placed())
    [raw] = dealer.raw["vault"]
    other = DealerSettings(dealer_vault_keys="other:" + "B" * 43 + "=")
    restarted = create_app(other, transport=MemoryTransport(), registry=CollectorRegistry())

    with pytest.raises(VaultError, match="unknown vault key id"):
        restarted.processor.fold(restarted.processor.topics.vault, raw)


async def test_a_call_reveals_a_deck_that_verifies_and_a_resent_call_does_nothing(
    dealer: Harness,
) -> None:
    command = call(command_id="c1")
    await dealer.send("rounds", GAME.bet_placed())
    await dealer.send("commands", command, command)

    [called] = dealer.on("rounds", Called)
    [dealt] = dealer.on("rounds", Dealt)
    assert isinstance(called, Called) and isinstance(dealt, Dealt)
    deck = [Card.parse(text) for text in called.deck]
    assert verify_commitment(deck, bytes.fromhex(called.salt), dealt.commitment)
    assert dealer.on("rounds", CommandRejected) == []


async def test_a_call_for_another_players_round_is_rejected_on_the_rounds_topic(
    dealer: Harness,
) -> None:
    await dealer.send("rounds", GAME.bet_placed())
    await dealer.send("commands", call(player_id="p2"))

    [rejected] = dealer.on("rounds", CommandRejected)
    assert isinstance(rejected, CommandRejected)
    assert (rejected.reason, rejected.player_id) == (Reason.NOT_YOUR_ROUND, "p2")


async def test_a_void_and_a_second_malfunction_end_the_round_with_one_round_voided(
    dealer: Harness,
) -> None:
    await dealer.send("rounds", GAME.bet_placed())
    await dealer.send("commands", void_round(command_id="v1"))
    await dealer.send("rounds", GAME.malfunction("m2"))

    assert len(dealer.on("rounds", RoundVoided)) == 1
    assert dealer.service.processor.state_for("p1").open == frozenset()


async def test_a_tick_after_the_decision_timeout_folds_for_the_player(dealer: Harness) -> None:
    await dealer.send("rounds", GAME.bet_placed())  # dealt at NOW by the harness clock
    await dealer.tick(29)
    assert dealer.on("rounds", Folded) == []

    await dealer.tick(30)
    [folded] = dealer.on("rounds", Folded)
    assert isinstance(folded, Folded) and folded.auto
    assert dealer.registry.get_sample_value("holdem_open_rounds", {"service": "dealer"}) == 1


async def test_unreadable_rounds_records_and_dealer_commands_are_rejected_with_the_reason(
    dealer: Harness,
) -> None:
    await dealer.send("rounds", b"{not json")
    await dealer.send("commands", b'{"type": "command.call", "player_id": "p1"}')
    await dealer.send("commands", b'{"type": "command.place_bet", "player_id": "p1"}')

    rejected = dealer.on("rejected", MessageRejected)
    assert [(r.reason, r.source_topic) for r in rejected] == [  # type: ignore[attr-defined]
        (Reason.MALFORMED, "t1.holdem.rounds"),
        (Reason.INVALID, "t1.holdem.commands"),
    ]  # the malformed PlaceBet is the wallet's to report
