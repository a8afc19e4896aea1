"""The processor against records as an attacker or a broken client writes them: wrong keys and
partitions, Unicode ids, looser-than-schema JSON, a decider or hook that breaks, a producer that
cannot publish. Each record is answered once or refused once, and the next one is handled."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.messages import command
from support.outbox import ListOutbox, handle
from support.toy import TOY

from holdem.core.contracts import (
    Call,
    Malfunction,
    MessageRejected,
    Reason,
    RecordReason,
    dump,
)
from holdem.core.wire.partitioning import partition_for_key as partition_for
from holdem.core.wire.topics import Topics
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import FatalError
from holdem.runtime.processor import Processor

PARTITIONS = 3
COMMANDS = Topics().commands


def toy(spec: Any = TOY) -> tuple[Processor[Any], ListOutbox]:
    outbox = ListOutbox()
    metrics = Metrics(CollectorRegistry())
    return Processor(spec, Topics(), outbox, metrics, partitions=PARTITIONS), outbox


async def send(
    processor: Processor[Any],
    raw: bytes,
    key: bytes | None,
    partition: int | None = None,
    offset: int = 0,
) -> None:
    if partition is None:
        partition = partition_for(key, PARTITIONS) if key else 0
    await handle(processor, COMMANDS, partition, offset, raw, key)


def a_call(player: str = "p1", **fields: Any) -> bytes:
    return dump(command(Call, player_id=player, round_id=fields.pop("round_id", "r1"), **fields))


async def test_a_unicode_player_id_is_refused_once_and_the_next_command_is_answered() -> None:
    processor, outbox = toy()
    raw = a_call().replace(b'"p1"', '"hé"'.encode())

    await send(processor, raw, "hé".encode(), offset=0)
    await send(processor, a_call(round_id="r2"), b"p1", offset=1)

    [rejected] = outbox.parsed("rejected")
    assert (rejected.reason, rejected.player_id) == (Reason.INVALID, "unknown")
    assert rejected.source_key == "hé" and base64.b64decode(rejected.raw_base64) == raw
    assert [m.round_id for m in outbox.parsed("rounds")] == ["r2"]


@pytest.mark.parametrize("key", [None, b"p2", b"", "p1é".encode()])
async def test_a_record_whose_key_is_not_its_player_is_refused_and_not_applied(
    key: bytes | None,
) -> None:
    processor, outbox = toy()

    await send(processor, a_call("p1"), key, partition=partition_for(b"p1", PARTITIONS))

    [rejected] = outbox.parsed("rejected")
    assert rejected.reason is RecordReason.KEY_MISMATCH
    assert outbox.parsed("rounds") == [] and processor.state_for("p1") == set()


async def test_a_record_on_another_partition_than_murmur2_gives_its_key_is_refused() -> None:
    processor, outbox = toy()
    right = partition_for(b"p1", PARTITIONS)

    await send(processor, a_call("p1"), b"p1", partition=(right + 1) % PARTITIONS, offset=9)

    [rejected] = outbox.parsed("rejected")
    assert rejected.reason is RecordReason.WRONG_PARTITION
    assert (rejected.source_partition, rejected.source_offset) == ((right + 1) % 3, 9)
    assert rejected.player_id == "p1" and outbox.parsed("rounds") == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"occurred_at": 0}, "occurred_at"),
        ({"version": 1.0}, "version"),
        ({"version": True}, "version"),
        ({"round_id": 7}, "round_id"),
        ({"command_id": ""}, "command_id"),
    ],
)
async def test_parsing_is_as_strict_as_the_published_schema(
    change: dict[str, Any], field: str
) -> None:
    processor, outbox = toy()
    body = {**json.loads(a_call()), **change}

    await send(processor, json.dumps(body).encode(), b"p1")

    [rejected] = outbox.parsed("rejected")
    assert rejected.reason is Reason.INVALID and field in rejected.detail
    assert rejected.player_id == "p1"  # the record's key is kept


async def test_one_client_event_id_sent_thrice_gives_distinct_output_ids() -> None:
    processor, outbox = toy()
    for offset, round_id in enumerate(("r1", "r2", "r3")):
        await send(processor, a_call(round_id=round_id, event_id="same"), b"p1", offset=offset)

    ids = [m.event_id for m in outbox.parsed("rounds")]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert {m.causation_id for m in outbox.parsed("rounds")} == {"same"}  # still traceable


async def test_a_hook_that_breaks_after_deciding_dead_letters_the_record_and_moves_on() -> None:
    calls = 0

    def breaks_once(state: Any, message: Any, events: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyError("metrics bug")

    processor, outbox = toy(replace(TOY, on_handled=breaks_once))
    await send(processor, a_call(round_id="r1"), b"p1", offset=0)
    await send(processor, a_call(round_id="r2"), b"p1", offset=1)

    [rejected] = outbox.parsed("rejected")
    assert rejected.reason is Reason.PROCESSING_FAILED and "metrics bug" in rejected.detail
    assert [m.round_id for m in outbox.parsed("rounds")] == ["r1", "r2"]


async def test_a_producer_that_cannot_publish_is_fatal_not_a_dead_letter() -> None:
    processor, outbox = toy()
    outbox.fail = FatalError("fenced")

    with pytest.raises(FatalError):
        await send(processor, a_call(), b"p1")
    with pytest.raises(FatalError):  # not even a rejection can be published: still fatal
        await send(processor, b"{not json", b"p1")


async def test_the_replay_path_skips_records_that_are_not_what_their_key_says() -> None:
    processor, _ = toy()
    rounds = Topics().rounds
    malfunction = Malfunction(
        event_id="m1",
        player_id="p1",
        round_id="r9",
        occurred_at="2026-01-01T00:00:00Z",  # type: ignore[arg-type]
        source="x",
        reason="y",
    )
    processor.fold(rounds, dump(malfunction), b"p2", partition_for(b"p2", PARTITIONS))
    assert processor.state_for("p1") == set() and processor.state_for("p2") == set()
    processor.fold(rounds, dump(malfunction), b"p1", partition_for(b"p1", PARTITIONS))
    assert processor.state_for("p1") == {"r9"}


def test_a_rejection_always_validates_whatever_the_record_was() -> None:
    # MessageRejected is built from checked or truncated parts only (the "hé" stall came from
    # a rejection that failed its own schema).
    for key in (None, b"\xff\xfe", "é".encode() * 300, b"ok"):
        for raw in (b"", b"\x00" * 70000, json.dumps({"player_id": "x" * 500}).encode()):
            processor, outbox = toy()
            asyncio.run(send(processor, raw, key, partition=0, offset=2**40))
            [rejected] = outbox.parsed("rejected")
            assert isinstance(rejected, MessageRejected)
            assert rejected.raw_size == len(raw)


async def test_a_decider_that_raises_is_asked_once_and_its_record_dead_lettered() -> None:
    calls: list[str] = []

    def decide(state: Any, message: Any, ctx: Any) -> Any:
        calls.append(message.round_id)
        return TOY.decide(state, message, ctx)

    processor, outbox = toy(replace(TOY, decide=decide))
    await send(processor, a_call(round_id="poison"), b"p1")
    await send(processor, a_call(round_id="r2"), b"p1")

    assert calls == ["poison", "r2"]  # a pure function is not retried: it would raise again
    [rejected] = outbox.parsed("rejected")
    assert rejected.reason == Reason.PROCESSING_FAILED and "RuntimeError" in rejected.detail
    assert [m.round_id for m in outbox.parsed("rounds")] == ["poison", "r2"]
