"""Per-partition snapshots of a service's state on a compacted topic of its own, so that a start
or an assignment loads the latest one and replays only the tail of the log (ADR 013).

A snapshot record sits on the same partition number as the state it covers, keyed by that
number, and carries the offsets of the state topics it covers: an input topic's next offset to
consume (what is beyond it is read again, in order, and folded again, which evolve allows), a
state-only topic's last stable offset (the service is its only writer and folded all it wrote).
It is written inside a batch's transaction, so it commits with the offsets it names."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from holdem.client.connection import KafkaConnection
from holdem.client.topics import Topics

FORMAT = 1
LOOK_BACK = 64  # records read back from a partition's end to find its latest snapshot
READ_TIMEOUT_S = 30.0


def snapshot_topic(topics: Topics, service: str) -> str:
    """``[prefix.]holdem.<service>.snapshots``

    >>> snapshot_topic(Topics().with_prefix("t1"), "wallet")
    't1.holdem.wallet.snapshots'
    """
    return topics.commands.removesuffix("holdem.commands") + f"holdem.{service}.snapshots"


@dataclass(frozen=True)
class Codec:
    """A service's state to bytes and back (its ``holdem.<service>.snapshot`` module)."""

    dump: Callable[[Any], bytes]
    load: Callable[[bytes], Any]


class SnapshotFormatError(ValueError):
    """A snapshot record that is not one of ours for this partition."""


@dataclass(frozen=True)
class Snapshot:
    service: str
    partition: int
    offsets: dict[str, int]  # state topic -> the offset its replay starts from
    state: bytes

    def to_bytes(self) -> bytes:
        body = {
            "format": FORMAT,
            "service": self.service,
            "partition": self.partition,
            "offsets": self.offsets,
            "state": self.state.decode(),
        }
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, raw: bytes, service: str, partition: int) -> Snapshot:
        try:
            body = json.loads(raw)
            offsets = {str(t): int(o) for t, o in body["offsets"].items()}
            snapshot = cls(body["service"], int(body["partition"]), offsets, body["state"].encode())
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise SnapshotFormatError(f"unreadable snapshot: {error!r}") from error
        if body.get("format") != FORMAT or (snapshot.service, snapshot.partition) != (
            service,
            partition,
        ):
            raise SnapshotFormatError(
                f"snapshot of {snapshot.service}/{snapshot.partition} (format "
                f"{body.get('format')}) where {service}/{partition} (format {FORMAT}) was expected"
            )
        if any(o < 0 for o in offsets.values()):
            raise SnapshotFormatError("negative offset in a snapshot")
        return snapshot

    def starts(self) -> dict[TopicPartition, int]:
        return {TopicPartition(t, self.partition): o for t, o in self.offsets.items()}


async def latest(
    connection: KafkaConnection, topic: str, partitions: list[int]
) -> dict[int, bytes]:
    """The last committed record of each partition of ``topic``, if any."""
    consumer = AIOKafkaConsumer(
        **connection.kwargs(), group_id=None, enable_auto_commit=False,
        isolation_level="read_committed",
    )  # fmt: skip
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        begins = await consumer.beginning_offsets(tps)
        found: dict[int, bytes] = {}
        deadline = time.monotonic() + READ_TIMEOUT_S
        for tp in tps:
            if ends[tp] <= begins[tp]:
                continue
            consumer.seek(tp, max(begins[tp], ends[tp] - LOOK_BACK))
            while await consumer.position(tp) < ends[tp]:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"snapshot topic {topic} not read in {READ_TIMEOUT_S}s")
                for record in (await consumer.getmany(tp, timeout_ms=500)).get(tp, []):
                    if record.offset < ends[tp] and record.value is not None:
                        found[tp.partition] = record.value
        return found
    finally:
        await consumer.stop()
