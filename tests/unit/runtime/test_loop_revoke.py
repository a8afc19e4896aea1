"""Issue 8 (a), deterministically: a batch fetched before a revoke is not decided after it.

The real-Kafka version (tests/integration/test_rebalance_kafka.py) depends on a race that the
issue saw once in about 5,000 rounds; here the race is laid out step by step on the loop itself:
a batch in hand, the revoke resets the state, then the batch reaches ``_decide``."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from aiokafka import TopicPartition
from prometheus_client import CollectorRegistry
from support.messages import command
from support.outbox import ListOutbox
from support.toy import TOY

from holdem.core.contracts import Call, Malfunction, dump
from holdem.core.decider import Context
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import Topics
from holdem.runtime.loop import ServiceLoop
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import FatalError
from holdem.runtime.processor import Processor
from holdem.runtime.rebuild import Rebuild
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.transport import Membership

PARTITIONS = 3
PLAYER = "p1"
PARTITION = partition_for_key(PLAYER.encode(), PARTITIONS)


class CommittingOutbox(ListOutbox):
    def __init__(self) -> None:
        super().__init__()
        self.commits: list[dict[TopicPartition, int]] = []

    async def commit(
        self, offsets: dict[TopicPartition, int], group_id: str, member: object = None
    ) -> None:
        self.commits.append(dict(offsets))


GENERATION = 4


class Member:  # what the loop reads of its group consumer's membership
    def __init__(self) -> None:
        self.generation = GENERATION
        self.rejoin_pending = False

    def membership(self) -> Membership:
        return Membership("member-1", self.generation, self.rejoin_pending)


@dataclass
class Fetched:  # what getmany hands over: enough of aiokafka's ConsumerRecord
    offset: int
    value: bytes
    key: bytes
    headers: tuple[Any, ...] = ()


def loop_knowing_round_r1() -> tuple[ServiceLoop, CommittingOutbox]:
    """A toy service whose partition already answered r1 (it would not answer it again)."""
    outbox = CommittingOutbox()
    processor = Processor(TOY, Topics(), outbox, Metrics(CollectorRegistry()), partitions=3)  # type: ignore[arg-type]
    done = Malfunction(
        **Context(now=datetime.now(UTC), cause_id="c0").envelope(PLAYER, "r1"),
        source="toy",
        reason="x",
    )
    processor.fold(Topics().rounds, dump(done), PLAYER.encode(), PARTITION)
    settings = RuntimeSettings(partitions=PARTITIONS, snapshot_interval_s=0)
    loop = ServiceLoop(processor, outbox, settings, lambda error: None, MemoryTransport())  # type: ignore[arg-type]
    loop.group.consumer = Member()  # type: ignore[assignment]
    loop.group.generation, loop.group.ready = GENERATION, True  # as after the assignment's rebuild
    return loop, outbox


def fetched_call() -> dict[TopicPartition, list[Any]]:
    call = command(Call, PLAYER, round_id="r1")
    record = Fetched(offset=7, value=dump(call), key=PLAYER.encode())
    return {TopicPartition(Topics().commands, PARTITION): [record]}


async def test_a_batch_fetched_before_a_revoke_is_left_for_the_next_owner() -> None:
    loop, outbox = loop_knowing_round_r1()
    batch = fetched_call()  # in the loop's hands when the rebalance starts

    await Rebuild(loop.wiring, loop.group).on_partitions_revoked(set(batch))
    await loop._decide(batch)

    assert outbox.records == [] and outbox.commits == []  # not decided, offsets not moved


async def test_the_same_batch_decided_against_the_reset_state_would_answer_r1_twice() -> None:
    """The control: without the gate, the reset state does not know r1 and answers it again,
    so the test above can fail."""
    loop, outbox = loop_knowing_round_r1()
    batch = fetched_call()

    await Rebuild(loop.wiring, loop.group).on_partitions_revoked(set(batch))
    loop.group.ready = True  # what the runtime before the batch loop did: no gate after a reset
    await loop._decide(batch)

    assert [record[3] for record in outbox.records] == ["round.malfunction"]


async def test_before_the_revoke_the_batch_is_decided_against_the_whole_state() -> None:
    loop, outbox = loop_knowing_round_r1()
    batch = fetched_call()

    await loop._decide(batch)

    assert outbox.records == []  # r1 is known: nothing to answer
    assert outbox.commits == [{TopicPartition(Topics().commands, PARTITION): 8}]


async def test_a_member_evicted_while_busy_decides_nothing_until_it_is_assigned_again() -> None:
    """Its heartbeat learnt the group moved on (generation reset): a new owner may already be
    deciding these records, and aiokafka would not refuse this member's offsets."""
    loop, outbox = loop_knowing_round_r1()
    loop.processor.reset()  # a state that would answer r1 if asked
    loop.group.consumer.generation = -1  # type: ignore[union-attr]

    await loop._decide(fetched_call())

    assert outbox.records == [] and outbox.commits == []


async def test_a_rebalance_pending_holds_the_batch_back_too() -> None:
    loop, outbox = loop_knowing_round_r1()
    loop.processor.reset()
    loop.group.consumer.rejoin_pending = True  # type: ignore[union-attr]

    await loop._decide(fetched_call())

    assert outbox.records == [] and outbox.commits == []


class LeakingConsumer(Member):
    """A fetch that ends in a library's own CancelledError (aiokafka's stop after assign([])
    raised one from its committed-offsets task)."""

    async def getmany(self, **_: Any) -> dict[TopicPartition, list[Fetched]]:
        raise asyncio.CancelledError


async def test_a_cancellation_from_inside_the_loop_ends_the_process() -> None:
    loop, _ = loop_knowing_round_r1()
    ended: list[BaseException] = []
    loop.wiring.fatal = ended.append
    loop.group.consumer = LeakingConsumer()  # type: ignore[assignment]
    await asyncio.wait_for(loop._run(), timeout=5)
    assert len(ended) == 1 and isinstance(ended[0], asyncio.CancelledError)


async def test_the_loop_stopped_by_its_owner_is_not_a_failure() -> None:
    loop, _ = loop_knowing_round_r1()
    ended: list[BaseException] = []
    loop.wiring.fatal = ended.append
    idle = asyncio.Event()

    class Idle(Member):
        async def getmany(self, **_: Any) -> dict[TopicPartition, list[Fetched]]:
            idle.set()
            await asyncio.sleep(3600)
            return {}

    loop.group.consumer = Idle()  # type: ignore[assignment]
    task = asyncio.create_task(loop._run())
    await idle.wait()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled() and ended == []


class Reachable(Member):
    """A member whose broker answers (or not) the ask for the log's ends."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.tp = TopicPartition(Topics().commands, PARTITION)

    def assignment(self) -> set[TopicPartition]:
        return {self.tp}

    async def end_offsets(self, tps: Any) -> dict[TopicPartition, int]:
        if self.down:
            raise ConnectionError("broker unreachable")
        return {self.tp: 3}

    def known_position(self, tp: TopicPartition) -> int | None:
        return 3


async def test_a_broker_it_cannot_ask_stops_the_timers_and_its_return_restarts_them() -> None:
    loop, _ = loop_knowing_round_r1()
    consumer = Reachable()
    loop.group.consumer = consumer  # type: ignore[assignment]
    before = loop.group.resumed_at
    assert await loop.watches.caught_up()

    loop.group.ready, loop.group.generation = True, consumer.membership().generation
    assert loop.healthy()
    consumer.down = True
    assert not await loop.watches.caught_up()  # no tick judges a timeout while the broker is away
    assert loop.group.resumed_at == before
    assert not loop.healthy()  # cut off, it still thinks itself a member: it is not ready

    consumer.down = False
    assert await loop.watches.caught_up()
    assert loop.healthy()
    resumed = loop.group.resumed_at
    assert resumed is not None and (before is None or resumed > before)


async def test_a_batch_cut_short_by_a_fatal_error_leaves_no_offsets_for_the_next() -> None:
    """The checkpoint owns one batch at a time (``Checkpoint.begin``): the offsets a batch
    stored before its producer failed are not committed with the batch after it."""
    loop, outbox = loop_knowing_round_r1()
    other = (PARTITION + 1) % PARTITIONS
    decide = loop.processor.process

    async def fails_on_other(topic: str, partition: int, *args: Any) -> None:
        if partition == other:
            raise FatalError("the producer was fenced")
        await decide(topic, partition, *args)

    loop.processor.process = fails_on_other  # type: ignore[method-assign]
    first = fetched_call()  # its offset is stored, then the other partition's record fails
    call = command(Call, "p2", round_id="r2")
    first[TopicPartition(Topics().commands, other)] = [Fetched(3, dump(call), b"p2")]
    with pytest.raises(FatalError):
        await loop._decide(first)

    loop.processor.process = decide  # type: ignore[method-assign]
    again = {TopicPartition(Topics().commands, other): [Fetched(3, dump(call), b"p2")]}
    await loop._decide(again)

    assert outbox.commits == [{TopicPartition(Topics().commands, other): 4}]
