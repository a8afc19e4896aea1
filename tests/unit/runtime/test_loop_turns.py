"""The event loop gets a turn while a batch is decided, and a batch carries at most one
partition's snapshot.

Deciding a batch awaits nothing (its records are buffered for the commit), and a snapshot dumps
a partition in one step, so without a turn the heartbeat waits for all of it. The soak of
2026-12-06 saw the wallet, at a fifth of a core, go over its 6 s session on a batch and its
snapshot: the group evicted it. Counted, not timed: a ticker task counts the turns it is given,
and each step records the count it saw."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pytest
from aiokafka import TopicPartition
from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs
from support.outbox import ListOutbox
from support.toy import TOY

from holdem.core.wire.topics import Topics
from holdem.runtime import checkpoint as checkpoint_module
from holdem.runtime import watches as watches_module
from holdem.runtime.checkpoint import Checkpoint
from holdem.runtime.loop import YIELD_EVERY, ServiceLoop
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.metrics import Metrics
from holdem.runtime.partitions import PartitionStore
from holdem.runtime.processor import Processor
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.snapshots import Codec, Snapshot
from holdem.runtime.transport import Membership
from holdem.runtime.watches import LAG_PERIOD_S, Watches

RECORDS = 300
PARTITIONS = 3


class Ticker:
    """Counts the turns of the event loop it is given."""

    def __init__(self) -> None:
        self.turns = 0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            self.turns += 1
            await asyncio.sleep(0)

    async def __aenter__(self) -> Ticker:
        self._task = asyncio.create_task(self._run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


def longest_run(seen: list[int]) -> int:
    """The most steps in a row that saw the same count of turns."""
    longest = run = 1
    for before, now in pairwise(seen):
        run = run + 1 if now == before else 1
        longest = max(longest, run)
    return longest


class Member:
    def membership(self) -> Membership:
        return Membership("member-1", 1, False)

    def assignment(self) -> set[TopicPartition]:
        return {TopicPartition(Topics().commands, p) for p in range(PARTITIONS)}

    def highwater(self, tp: TopicPartition) -> int:
        return 0

    def known_position(self, tp: TopicPartition) -> int:
        return 0

    async def position(self, tp: TopicPartition) -> int:
        return 0

    async def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: 0 for tp in tps}


@dataclass
class Fetched:
    offset: int
    value: bytes
    key: bytes
    headers: tuple[Any, ...] = ()


class CommittingOutbox(ListOutbox):
    def __init__(self) -> None:
        super().__init__()
        self.snapshots: list[Any] = []

    def add_snapshots(self, snapshots: list[Any]) -> None:
        self.snapshots += snapshots

    async def commit(self, offsets: Any, group_id: Any, member: object = None) -> None:
        pass


def toy_loop(snapshot_interval_s: float = 0, **settings_given: Any) -> ServiceLoop:
    outbox = CommittingOutbox()
    processor = Processor(TOY, Topics(), outbox, Metrics(CollectorRegistry()), partitions=3)  # type: ignore[arg-type]
    settings = RuntimeSettings(
        partitions=PARTITIONS, snapshot_interval_s=snapshot_interval_s, **settings_given
    )
    loop = ServiceLoop(processor, outbox, settings, lambda error: None, MemoryTransport())  # type: ignore[arg-type]
    loop.group.consumer = Member()  # type: ignore[assignment]
    loop.group.generation, loop.group.ready = 1, True
    return loop


def batch_of(records: int) -> dict[TopicPartition, list[Any]]:
    tp = TopicPartition(Topics().commands, 0)
    return {tp: [Fetched(offset=n, value=b"{}", key=b"p1") for n in range(records)]}


async def test_a_batch_gives_the_event_loop_a_turn_every_few_records() -> None:
    loop = toy_loop()
    seen: list[int] = []
    async with Ticker() as ticker:

        async def process(*args: Any) -> None:
            seen.append(ticker.turns)

        loop.processor.process = process  # type: ignore[method-assign]
        loop.processor.wants = lambda topic, kind: True  # type: ignore[method-assign]
        await loop._decide(batch_of(RECORDS))

    assert len(seen) == RECORDS
    assert longest_run(seen) <= YIELD_EVERY
    assert seen[-1] - seen[0] >= RECORDS // YIELD_EVERY - 1


class CountingCodec:
    def __init__(self) -> None:
        self.dumps = 0

    def dump(self, state: Any) -> bytes:
        self.dumps += 1
        return b"{}"


async def test_a_batch_carries_one_partitions_snapshot_and_the_partitions_take_turns(
    monkeypatch: Any,
) -> None:
    """ADR 047: each partition is snapshotted once an interval, a third of an interval apart
    (3 partitions), never two in one batch: a batch's records wait for its dumps."""
    loop = toy_loop(snapshot_interval_s=30)
    clock = [100.0]
    monkeypatch.setattr(checkpoint_module.time, "monotonic", lambda: clock[0])
    codec = CountingCodec()
    loop.wiring.store = PartitionStore(dict, Codec(dump=codec.dump, load=lambda raw: {}))
    checkpoint = Checkpoint(loop.wiring, loop.group, loop.group_id)
    checkpoint.snapshot_later()  # rebuilt at 100: due at 110, 120 and 130
    outbox: Any = loop.wiring.outbox
    written: list[tuple[float, list[int]]] = []
    for at in (105.0, 109.9, 110.0, 110.5, 121.0, 125.0, 135.0, 139.0, 141.0, 151.0, 161.0):
        clock[0] = at
        outbox.snapshots.clear()
        await checkpoint._snapshot_if_due()
        if outbox.snapshots:
            written.append((at, [partition for _, partition, _, _ in outbox.snapshots]))

    assert written == [(110.0, [0]), (121.0, [1]), (135.0, [2]), (141.0, [0]), (151.0, [1])]
    assert codec.dumps == 5
    sample = loop.wiring.metrics.registry.get_sample_value
    assert sample("holdem_snapshots_total", {"service": "toy"}) == 5
    assert sample("holdem_snapshot_seconds_count", {"service": "toy"}) == 5
    assert sample("holdem_snapshot_bytes_total", {"service": "toy"}) > 0


async def test_a_late_batch_dumps_the_most_overdue_partition_first(monkeypatch: Any) -> None:
    """After a quiet spell every partition is due: one per batch, the longest waiting first."""
    loop = toy_loop(snapshot_interval_s=30)
    clock = [100.0]
    monkeypatch.setattr(checkpoint_module.time, "monotonic", lambda: clock[0])
    loop.wiring.store = PartitionStore(dict, Codec(dump=lambda state: b"{}", load=lambda r: {}))
    checkpoint = Checkpoint(loop.wiring, loop.group, loop.group_id)
    checkpoint.snapshot_later()
    outbox: Any = loop.wiring.outbox
    order = []
    for at in (500.0, 500.1, 500.2, 500.3):
        clock[0] = at
        outbox.snapshots.clear()
        await checkpoint._snapshot_if_due()
        order.append([partition for _, partition, _, _ in outbox.snapshots])
    assert order == [[0], [1], [2], []]


@pytest.mark.parametrize(
    ("compression", "head"), [("none", b'{"format":1,'), ("zlib", b'{"format":3,')]
)
async def test_the_snapshot_records_are_written_in_the_format_the_settings_name(
    monkeypatch: Any, compression: str, head: bytes
) -> None:
    """ADR 048: format 1 unless HOLDEM_SNAPSHOT_COMPRESSION=zlib; either loads back."""
    loop = toy_loop(snapshot_interval_s=30, snapshot_compression=compression)
    clock = [100.0]
    monkeypatch.setattr(checkpoint_module.time, "monotonic", lambda: clock[0])
    state = b'{"rows": [' + b'["p0001", "r1", 500], ' * 500 + b"[]]}"
    loop.wiring.store = PartitionStore(dict, Codec(dump=lambda s: state, load=lambda r: {}))
    checkpoint = Checkpoint(loop.wiring, loop.group, loop.group_id)
    checkpoint.snapshot_later()
    clock[0] = 111.0
    await checkpoint._snapshot_if_due()
    [(_, partition, _, value)] = loop.wiring.outbox.snapshots  # type: ignore[attr-defined]
    assert value.startswith(head)
    assert Snapshot.from_bytes(value, "toy", partition).state == state


async def test_the_lag_gauge_says_when_the_event_loop_was_held(monkeypatch: Any) -> None:
    loop = toy_loop()
    watches = Watches(loop.wiring, loop.group, loop.group_id)
    clock = [100.0]
    monkeypatch.setattr(watches_module.time, "monotonic", lambda: clock[0])
    with capture_logs() as logs:
        await watches.measure_lag()  # the first: nothing to compare with
        clock[0] += LAG_PERIOD_S + 0.5  # on time, give or take
        await watches.measure_lag()
        clock[0] += LAG_PERIOD_S + 4.0  # four seconds late: the loop was held
        await watches.measure_lag()
    held = [entry for entry in logs if entry["event"] == "event loop held"]
    assert [entry["held_s"] for entry in held] == [4.0]
