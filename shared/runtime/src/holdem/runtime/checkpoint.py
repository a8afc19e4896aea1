"""One owner per batch (ADR 035): the offsets a batch consumed, the snapshot records due with
it and the outbox's transaction, committed by one ``commit()`` in numbered steps.

``begin`` starts each batch with no offsets: a batch cut short (a fatal error while deciding)
leaves nothing for the next one to commit."""

from __future__ import annotations

import time

import structlog

from holdem.runtime.member import GroupMember
from holdem.runtime.transport import Offsets, SnapshotRecord, TopicPartition
from holdem.runtime.wiring import Wiring

log = structlog.get_logger(__name__)
SLOW_SNAPSHOT_S = 1.0  # a partition's dump that took this long (wall) is logged: a heartbeat risk


class Checkpoint:
    def __init__(self, wiring: Wiring, group: GroupMember, group_id: str) -> None:
        self.wiring = wiring
        self.group = group
        self.group_id = group_id
        self.offsets: Offsets = {}
        self.records = 0
        self.batches = 0
        # Each assigned partition's next snapshot time (monotonic): spread across the interval,
        # so that one batch carries one partition's dump, not all of them (ADR 047).
        self._snapshot_due: dict[int, float] = {}

    def begin(self) -> None:
        """A new batch: no offsets, no records yet."""
        self.offsets, self.records = {}, 0

    def store_offset(self, tp: TopicPartition, offset: int, records: int) -> None:
        """``records`` of ``tp`` decided: its next offset to consume is ``offset``."""
        self.offsets[tp] = offset
        self.records += records

    def snapshot_later(self) -> None:
        """The partitions were just rebuilt: the i-th of n assigned is due (i + 1) / n of an
        interval from now, the last a whole interval away."""
        consumer = self.group.consumer
        assigned = sorted({tp.partition for tp in consumer.assignment()}) if consumer else []
        self._snapshot_due = spread(assigned, time.monotonic(), self._interval())

    def _interval(self) -> float:
        return self.wiring.settings.snapshot_interval_s

    async def commit(self) -> bool:
        """Commit the batch (the caller holds the lock); False when it was discarded."""
        wiring = self.wiring
        # 1. Due snapshots join the batch's transaction.
        await self._snapshot_if_due()
        # 2. A member that lost its partitions while deciding commits nothing: it folded the
        # batch's own events, so its state is forgotten and rebuilt at the reassignment.
        if not self.group.member():
            wiring.outbox.discard()
            wiring.forget()
            self.group.ready = False
            log.warning("membership lost mid-batch: batch discarded", group=self.group_id)
            return False
        # 3. One transaction: the records, the snapshots and the offsets, as the group member.
        await wiring.outbox.commit(self.offsets, self.group_id, self.group.identity())
        # 4. The progress clock and the counters move.
        self.group.progress_at = time.monotonic()
        self.batches += 1
        wiring.metrics.records.labels(wiring.name).inc(self.records)
        wiring.metrics.batches.labels(wiring.name).inc()
        return True

    async def _snapshot_if_due(self) -> None:
        """The most overdue of the assigned partitions whose snapshot is due goes into this
        batch's transaction with the offsets it covers; it is next due an interval later. One
        partition per batch (ADR 047): a dump is one synchronous step (the soak's wallet, 75
        players a partition with full windows: about 0.5 s on a busy machine) and the batch's
        records commit only after its bytes, so dumping every partition at once held every round in
        flight for the whole state's dump (the soak's bet -> Dealt p99 grew with the state)."""
        wiring, consumer = self.wiring, self.group.consumer
        interval = self._interval()
        if wiring.store.codec is None or consumer is None or interval <= 0:
            return
        now = time.monotonic()
        assigned = {tp.partition for tp in consumer.assignment()}
        due = self._snapshot_due
        for gone in set(due) - assigned:
            del due[gone]
        for new in assigned - set(due):  # assigned without a rebuild's spread: an interval away
            due[new] = now + interval
        ready = [p for p in assigned if due[p] <= now]
        if not ready:
            return
        partition = min(ready, key=lambda p: (due[p], p))
        due[partition] = now + interval
        inputs = set(wiring.inputs)
        offsets = {}
        for topic in wiring.state_topics:
            tp = TopicPartition(topic, partition)
            if topic in inputs:
                offsets[topic] = self.offsets.get(tp) or await consumer.position(tp)
            else:  # a state-only topic: its last stable offset (this service its only writer)
                offsets[topic] = (await consumer.end_offsets([tp]))[tp]
        started = time.monotonic()
        snapshot = wiring.store.dump(wiring.name, partition, offsets)
        compressed = wiring.settings.snapshot_compression == "zlib"
        records: list[SnapshotRecord] = [
            (wiring.snapshot_topic, partition, key, value)
            for key, value in snapshot.to_records(compressed)
        ]
        took_s = time.monotonic() - started
        if took_s > SLOW_SNAPSHOT_S:
            log.warning("slow snapshot", partition=partition, took_s=round(took_s, 2))
        wiring.outbox.add_snapshots(records)
        metrics = wiring.metrics
        metrics.snapshots.labels(wiring.name).inc()
        metrics.snapshot_seconds.labels(wiring.name).observe(took_s)
        metrics.snapshot_bytes.labels(wiring.name).inc(sum(len(r[3]) for r in records))


def spread(partitions: list[int], now: float, interval: float) -> dict[int, float]:
    """When each of ``partitions`` is first due: the i-th of n at ``now + interval * (i + 1) /
    n``, so that their snapshots are an n-th of an interval apart and stay so.

    >>> spread([0, 1, 2], 100.0, 30.0)
    {0: 110.0, 1: 120.0, 2: 130.0}
    """
    n = len(partitions)
    return {p: now + interval * (i + 1) / n for i, p in enumerate(partitions)}
