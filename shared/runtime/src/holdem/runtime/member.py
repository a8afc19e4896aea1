"""This instance as a member of its consumer group, what the loop's jobs share of it: its
consumer, the generation its state was rebuilt for, the partitions waiting for a rebuild, the
states it kept across a rebalance (ADR 043), whether it is ready and when it last made
progress."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from holdem.runtime.partitions import Partition
from holdem.runtime.transport import GroupConsumer, Member, Membership, TopicPartition


@dataclass
class Kept:
    """A partition's state set aside at a revoke (ADR 043), valid again only if, at the next
    assignment, the group's committed offsets of its input partitions are still ``inputs`` and
    nothing was written to its other state topics after ``ends``: nobody else moved it."""

    part: Partition[Any]
    generation: int  # the group generation the state was valid in, at the revoke
    inputs: dict[TopicPartition, int | None]  # the group's committed offsets at the revoke
    ends: dict[TopicPartition, int]  # the last stable offsets of its other state topics


class GroupMember:
    def __init__(self, instance_id: str | None = None) -> None:
        self.instance_id = instance_id  # static membership (ADR 037), or None
        self.consumer: GroupConsumer | None = None
        self.ready = False
        self.generation: int | None = None  # the group generation the state was rebuilt for
        self.pending: list[int] | None = None  # assigned, not rebuilt yet
        # Set aside at the last revoke, checked and taken back (or dropped) by the next rebuild.
        self.kept: dict[int, Kept] = {}
        # When it last resumed making progress (rebuilt, or reached the broker again after it
        # could not): the ticks' timers count from it at the earliest (Context.resumed_at).
        self.resumed_at: datetime | None = None
        self.unreachable = False
        self.progress_at = time.monotonic()  # last decided batch, rebuild, or nothing waiting

    def membership(self) -> Membership:
        if self.consumer is None:
            return Membership(None, None, False)
        return self.consumer.membership()

    def identity(self) -> Member | None:
        """This member as the group coordinator knows it: what fences its offset commits."""
        member_id = self.membership().member_id
        if member_id is None or self.generation is None:
            return None
        return Member(self.generation, member_id, self.instance_id)

    def current_generation(self) -> int | None:
        return self.membership().generation

    def still_of_rebuilt_generation(self) -> bool:
        """Still a member of the generation its state was rebuilt for, a rejoin pending or not
        (what a revoke asks: a member evicted while frozen learns it from its heartbeat, whose
        answer resets its generation before it rejoins and revokes)."""
        now = self.membership()
        return now.member_id is not None and (
            now.generation is not None and now.generation == self.generation
        )

    def healthy(self) -> bool:
        """Ready to decide: the state of every assigned partition rebuilt, still the member of
        the generation it was rebuilt for, and a broker that answered the last tick's ask for
        the log's ends (the holdem_ready gauge; a container's health check). A process cut off
        from the broker still believes itself a member (it learns it was evicted only from the
        broker), so the unanswered ask is what tells it, and its health check, it cannot decide."""
        return self.ready and self.pending is None and self.member() and not self.unreachable

    def member(self) -> bool:
        """Still the member of the generation this state was rebuilt for, with no rebalance
        pending. A member evicted while busy (its rebuild outlasting the session timeout, say)
        learns it only from its next heartbeat, and aiokafka commits a transaction's offsets by
        group id alone (no KIP-447 generation check): a batch it committed then would be decided
        a second time by the partition's new owner. So it stops deciding by itself."""
        now = self.membership()
        if now.generation is None or self.generation is None:
            return False
        return now.generation == self.generation and not now.rejoin_pending
