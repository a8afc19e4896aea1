"""Where a batch's events go: buffered while the batch is decided, then published with the
batch's consumer offsets (and any snapshot records) in one transaction of the transport's
producer (``holdem.runtime.transport.Producer``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from holdem.runtime.transport import Member, Offsets, Producer, Record, SnapshotRecord


def fenced(transactional_id: str, error: object) -> str:
    """What a producer fenced by a newer one of its transactional id says (ADR 034): the id,
    and the only two ways it happens, so that the one critical line tells an operator which."""
    return (
        f"producer fenced: a newer producer uses transactional id {transactional_id!r}: either "
        "a twin runs with this HOLDEM_INSTANCE_ID (give each instance its own), or this process "
        "was presumed dead during an outage and its restart took over (nothing to do); "
        f"{error!r}"
    )


class FatalError(RuntimeError):
    """The service can no longer publish (fenced, or the broker refused every retry): the
    process must exit non-zero so that its supervisor restarts it, never live on doing nothing.
    The input that was being handled is not committed, so the new process handles it again."""


class Outbox(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def send(self, records: Sequence[Record]) -> None:
        """Take a decision's records: published with the next commit, all or none."""

    async def flush(self) -> None:
        """Publish what was sent since the last commit (ticks)."""


class TransactionalOutbox:
    """Exactly-once per poll batch: the records of every decision of a batch and the consumer
    offsets of that batch are committed in one transaction of ``producer``, so effects and
    progress commit or abort together, and read_committed consumers see all of a batch or none
    of it."""

    def __init__(self, producer: Producer) -> None:
        self.producer = producer
        self._pending: list[Record] = []
        self._snapshots: list[SnapshotRecord] = []
        self._committing = asyncio.Lock()  # a tick's commit and a batch's never overlap

    async def start(self) -> None:
        await self.producer.start()

    async def stop(self) -> None:
        await self.producer.stop()

    async def renew(self) -> None:
        """A new epoch of the transactional id, between two commits: what a transaction of this
        id left open (one the broker kept past its timeout, ADR 033) is aborted."""
        async with self._committing:
            await self.producer.renew()

    async def send(self, records: Sequence[Record]) -> None:
        self._pending.extend(records)

    def discard(self) -> None:
        """Drop what is pending (a batch decided by a member that lost its partitions)."""
        self._pending, self._snapshots = [], []

    def add_snapshots(self, snapshots: Sequence[SnapshotRecord]) -> None:
        """Snapshot records for the next commit: (topic, partition, key, value)."""
        self._snapshots.extend(snapshots)

    async def flush(self) -> None:
        await self.commit({}, None)

    async def commit(
        self, offsets: Offsets, group_id: str | None, member: Member | None = None
    ) -> None:
        """One transaction: every pending record, then the batch's offsets, sent as ``member``
        of the group (KIP-447: the coordinator refuses them from a member it no longer knows,
        and the transaction aborts). A fenced producer, a fenced member or a commit that fails
        every retry raises FatalError."""
        async with self._committing:
            records, self._pending = self._pending, []
            snapshots, self._snapshots = self._snapshots, []
            if records or offsets or snapshots:
                await self.producer.transact(records, snapshots, offsets, group_id, member)
