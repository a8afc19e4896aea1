"""One owner per batch (ADR 035): the offsets a batch consumed, the snapshot records due with
it and the outbox's transaction, committed by one ``commit()`` in numbered steps.

``begin`` starts each batch with no offsets: a batch cut short (a fatal error while deciding)
leaves nothing for the next one to commit."""

from __future__ import annotations

import asyncio
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
        self._snapshot_due = 0.0

    def begin(self) -> None:
        """A new batch: no offsets, no records yet."""
        self.offsets, self.records = {}, 0

    def store_offset(self, tp: TopicPartition, offset: int, records: int) -> None:
        """``records`` of ``tp`` decided: its next offset to consume is ``offset``."""
        self.offsets[tp] = offset
        self.records += records

    def snapshot_later(self) -> None:
        """The partitions were just rebuilt: the next snapshot is an interval away."""
        self._snapshot_due = time.monotonic() + self.wiring.settings.snapshot_interval_s

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
        """Every snapshot_interval_s, each assigned partition's state goes into this batch's
        transaction with the offsets it covers. Each partition's dump is one synchronous step
        (a wallet of 1,000 players: about 0.3 s of CPU); the event loop gets a turn after each,
        so the heartbeat does not wait for all of them."""
        wiring, consumer = self.wiring, self.group.consumer
        interval = wiring.settings.snapshot_interval_s
        if (
            wiring.store.codec is None
            or consumer is None
            or interval <= 0
            or time.monotonic() < self._snapshot_due
        ):
            return
        self._snapshot_due = time.monotonic() + interval
        inputs = set(wiring.inputs)
        assigned = sorted({tp.partition for tp in consumer.assignment()})
        only_state = [
            TopicPartition(t, p) for t in wiring.state_topics if t not in inputs for p in assigned
        ]
        stable = await consumer.end_offsets(only_state) if only_state else {}
        records: list[SnapshotRecord] = []
        for partition in assigned:
            offsets = {}
            for topic in wiring.state_topics:
                tp = TopicPartition(topic, partition)
                if topic in inputs:
                    offsets[topic] = self.offsets.get(tp) or await consumer.position(tp)
                else:
                    offsets[topic] = stable[tp]
            started = time.monotonic()
            snapshot = wiring.store.dump(wiring.name, partition, offsets)
            records += [
                (wiring.snapshot_topic, partition, key, value)
                for key, value in snapshot.to_records()
            ]
            took_s = time.monotonic() - started
            if took_s > SLOW_SNAPSHOT_S:
                log.warning("slow snapshot", partition=partition, took_s=round(took_s, 2))
            await asyncio.sleep(0)  # the heartbeat's turn between two partitions
        wiring.outbox.add_snapshots(records)
        wiring.metrics.snapshots.labels(wiring.name).inc(len(assigned))
