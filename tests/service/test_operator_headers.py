"""ADR 021: every record a service publishes carries the deployment's operator header, a round's
records carry the brand of the bet that started it (timer-made ones and after a restart from a
snapshot too), and a record naming another operator, or a brand that is not an id, is refused
before it is decided."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
import structlog
from prometheus_client import CollectorRegistry
from support.dealer import GAME, VAULT_KEYS, call, settled
from support.deciders import NOW
from support.messages import command
from support.outbox import ListOutbox, handle
from support.toy import TOY
from support.wallet import deposit, place_bet

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import Call, MessageRejected, RecordReason, dump, parse
from holdem.core.wire.headers import Stamp
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import Topics
from holdem.dealer.app import create_app as dealer_app
from holdem.dealer.settings import DealerSettings
from holdem.runtime.brands import MAX_BRANDS
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.metrics import Metrics
from holdem.runtime.processor import Processor
from holdem.runtime.snapshots import Snapshot
from holdem.runtime.transport import Record
from holdem.wallet.app import create_app as wallet_app
from holdem.wallet.settings import WalletSettings

OPERATOR = "acme"
PARTITIONS = 3


def stamp_of(record: Record) -> Stamp:
    return Stamp.of(record.headers)


def toy() -> tuple[Processor[Any], ListOutbox]:
    outbox = ListOutbox()
    metrics = Metrics(CollectorRegistry())
    processor = Processor(TOY, Topics(), outbox, metrics, partitions=PARTITIONS, operator=OPERATOR)
    return processor, outbox


async def send_call(
    processor: Processor[Any], headers: list[tuple[str, bytes]] | None, round_id: str = "r1"
) -> None:
    raw = dump(command(Call, player_id="p1", round_id=round_id))
    partition = partition_for_key(b"p1", PARTITIONS)
    await handle(processor, Topics().commands, partition, 0, raw, b"p1", headers)


@pytest.mark.parametrize(
    "headers",
    [None, [("operator", b"acme")], {"operator": "acme", "content-type": "application/json"}],
)
async def test_a_command_of_this_operator_or_without_the_header_is_decided_and_stamped(
    headers: Any,
) -> None:
    processor, outbox = toy()

    await send_call(processor, headers)

    [record] = outbox.records
    assert record.kind == "round.malfunction"  # the toy's decision
    assert stamp_of(record) == Stamp(OPERATOR, None)
    assert record.header_list()[0] == ("type", b"round.malfunction")


async def test_a_command_naming_another_operator_is_refused_and_never_decided() -> None:
    processor, outbox = toy()

    await send_call(processor, [("operator", b"other"), ("brand", b"b1")])

    [record] = outbox.records
    [rejected] = outbox.parsed("rejected")
    assert isinstance(rejected, MessageRejected) and rejected.version == 4
    assert rejected.reason == RecordReason.WRONG_OPERATOR
    assert "'other'" in rejected.detail and "'acme'" in rejected.detail
    assert outbox.parsed("rounds") == [] and processor.state_for("p1") == set()  # not decided
    # The refusal is this deployment's record: its operator, none of the refused one's brand.
    assert stamp_of(record) == Stamp(OPERATOR, None)


@pytest.mark.parametrize(
    "headers",
    [[("brand", b"two words")], [("brand", b"\xff")], [("operator", b"\xfe")]],
)
async def test_an_operator_or_brand_header_that_is_no_id_is_refused(
    headers: list[tuple[str, bytes]],
) -> None:
    processor, outbox = toy()

    await send_call(processor, headers)

    [rejected] = outbox.parsed("rejected")
    assert rejected.reason == RecordReason.BAD_HEADER
    assert outbox.parsed("rounds") == []


async def test_the_brand_of_a_command_is_stamped_on_what_it_decides() -> None:
    processor, outbox = toy()

    await send_call(processor, [("operator", b"acme"), ("brand", b"acme-eu")])

    assert [stamp_of(r) for r in outbox.records] == [Stamp(OPERATOR, "acme-eu")]


def dealer(outbox: ListOutbox, now: list[Any]) -> Processor[Any]:
    # One partition: the records below are all on partition 0.
    settings = DealerSettings(topic_prefix=OPERATOR, dealer_vault_keys=VAULT_KEYS, partitions=1)
    service = dealer_app(
        settings,
        transport=MemoryTransport(partitions=1),
        registry=CollectorRegistry(),
        new_deck=lambda: (GAME.deck, GAME.salt),
    )
    processor = service.processor
    processor.outbox = outbox
    processor.clock = lambda: now[0]
    assert processor.operator == OPERATOR  # from the settings' topic prefix (its tenant)
    return processor


BRANDED = [("type", b"round.bet_placed"), ("operator", b"acme"), ("brand", b"acme-eu")]


async def test_every_record_of_a_branded_round_carries_its_brand_a_timeout_fold_too() -> None:
    outbox, now = ListOutbox(), [NOW]
    processor = dealer(outbox, now)
    rounds = processor.topic_of("rounds")

    await handle(processor, rounds, 0, 0, dump(GAME.bet_placed()), b"p1", BRANDED)
    now[0] = NOW + timedelta(seconds=60)
    await processor.run_tick()

    assert [r.kind for r in outbox.records] == ["vault.deck_sealed", "round.dealt", "round.folded"]
    assert {stamp_of(r) for r in outbox.records} == {Stamp(OPERATOR, "acme-eu")}
    assert processor.store.brands_of(0) == {"p1/r1": "acme-eu"}
    await handle(processor, rounds, 0, 1, dump(settled()), b"p1", [("operator", b"acme")])
    assert processor.store.brands_of(0) == {}  # the round ended: its brand is forgotten


async def test_a_command_of_the_round_without_a_brand_still_gets_the_rounds_brand() -> None:
    outbox, now = ListOutbox(), [NOW]
    processor = dealer(outbox, now)
    rounds, commands = processor.topic_of("rounds"), processor.topic_of("commands")

    await handle(processor, rounds, 0, 0, dump(GAME.bet_placed()), b"p1", BRANDED)
    other_brand = [("operator", b"acme"), ("brand", b"else")]
    await handle(processor, commands, 0, 0, dump(call()), b"p1", other_brand)

    called = [r for r in outbox.records if r.kind == "round.called"]
    assert [stamp_of(r) for r in called] == [Stamp(OPERATOR, "acme-eu")]  # the round's, first


async def test_a_restart_from_a_snapshot_keeps_the_brand_of_an_open_round() -> None:
    outbox, now = ListOutbox(), [NOW]
    before = dealer(outbox, now)
    await handle(before, before.topic_of("rounds"), 0, 0, dump(GAME.bet_placed()), b"p1", BRANDED)
    codec = before.spec.snapshot
    assert codec is not None
    state = codec.dump(before.partition(0).state)
    raw = Snapshot("dealer", 0, {"t": 1}, state, before.store.brands_of(0)).to_bytes()

    after_outbox = ListOutbox()
    after = dealer(after_outbox, now)
    snapshot = Snapshot.from_bytes(raw, "dealer", 0)
    after.partition(0).state = codec.load(snapshot.state)
    after.store.restore_brands(0, snapshot.brands)
    now[0] = NOW + timedelta(seconds=60)
    await after.run_tick()

    [folded] = after_outbox.records
    assert folded.kind == "round.folded" and stamp_of(folded) == Stamp(OPERATOR, "acme-eu")


def test_a_snapshot_without_brands_still_loads() -> None:
    raw = Snapshot("dealer", 0, {"t": 1}, b"{}").to_bytes()
    assert b"brands" not in raw
    assert Snapshot.from_bytes(raw, "dealer", 0).brands == {}


async def test_a_replay_learns_brands_and_skips_another_operators_records() -> None:
    outbox, now = ListOutbox(), [NOW]
    processor = dealer(outbox, now)
    rounds = processor.topic_of("rounds")
    foreign = [("operator", b"other"), ("brand", b"x")]
    processor.fold(rounds, dump(GAME.bet_placed()), b"p1", 0, foreign)
    assert processor.partition(0).state.open == frozenset()  # never acted on: not folded

    processor.fold(rounds, dump(GAME.bet_placed()), b"p1", 0, BRANDED)
    assert processor.store.brands_of(0) == {"p1/r1": "acme-eu"}


async def test_remembered_brands_are_bounded_per_partition() -> None:
    outbox, now = ListOutbox(), [NOW]
    processor = dealer(outbox, now)
    processor.partition(0)
    processor.store.restore_brands(0, {f"p/r{n}": "b" for n in range(MAX_BRANDS + 10)})
    assert len(processor.store.brands_of(0)) == MAX_BRANDS
    assert "p/r0" not in processor.store.brands_of(0)  # the oldest go first


async def test_the_wallet_stamps_the_bets_brand_on_the_round_and_its_money() -> None:
    outbox = ListOutbox()
    service = wallet_app(
        WalletSettings(topic_prefix=OPERATOR, partitions=1),
        transport=MemoryTransport(partitions=1),
        registry=CollectorRegistry(),
    )
    processor = service.processor
    processor.outbox = outbox
    commands = processor.topic_of("commands")
    plain = [("operator", b"acme")]
    await handle(processor, commands, 0, 0, dump(deposit(10_000)), b"p1", plain)
    branded = [("operator", b"acme"), ("brand", b"acme-eu")]
    await handle(processor, commands, 0, 1, dump(place_bet("r1", ante=100)), b"p1", branded)

    stamps = {r.kind: stamp_of(r) for r in outbox.records}
    assert stamps["wallet.deposited"] == Stamp(OPERATOR, None)
    assert stamps["round.bet_placed"] == Stamp(OPERATOR, "acme-eu")
    assert stamps["wallet.stake_taken"] == Stamp(OPERATOR, "acme-eu")


async def test_in_seamless_mode_the_bet_decided_on_the_operators_answer_keeps_the_brand() -> None:
    """The operator's wallet need not echo the brand: the debit request carried it, and the
    BetPlaced decided on the answer (which names no brand) carries the round's."""
    outbox = ListOutbox()
    settings = WalletSettings(topic_prefix=OPERATOR, wallet_mode="seamless", partitions=1)
    service = wallet_app(
        settings, transport=MemoryTransport(partitions=1), registry=CollectorRegistry()
    )
    processor = service.processor
    processor.outbox = outbox
    operator = FaultyOperator(OperatorWallet(), Faults())
    operator.wallet.balances[("p1", "EUR")] = 10_000
    branded = [("operator", b"acme"), ("brand", b"acme-eu")]
    await handle(
        processor,
        processor.topic_of("commands"),
        0,
        0,
        dump(place_bet("r1", ante=100)),
        b"p1",
        branded,
    )
    [request] = [r for r in outbox.records if r.kind == "seamless.debit_requested"]
    assert stamp_of(request) == Stamp(OPERATOR, "acme-eu")
    operator.receive(parse("wallet", request.value))
    [answer] = operator.step()
    unbranded = [("operator", b"acme")]
    replies = processor.topic_of("seamless_replies")
    await handle(processor, replies, 0, 0, dump(answer), b"p1", unbranded)

    [placed] = [r for r in outbox.records if r.kind == "round.bet_placed"]
    assert stamp_of(placed) == Stamp(OPERATOR, "acme-eu")


async def test_log_lines_written_while_handling_a_branded_record_name_the_brand() -> None:
    seen: list[dict[str, Any]] = []

    def decide(state: Any, message: Any, ctx: Any) -> list[Any]:
        seen.append(structlog.contextvars.get_contextvars())
        return []

    processor = Processor(
        replace(TOY, decide=decide), Topics(), ListOutbox(), Metrics(CollectorRegistry())
    )
    raw = dump(command(Call, player_id="p1", round_id="r1"))
    await handle(processor, Topics().commands, 0, 0, raw, b"p1", [("brand", b"acme-eu")])
    await handle(processor, Topics().commands, 0, 1, raw, b"p1", None)

    assert [found.get("brand") for found in seen] == ["acme-eu", None]
