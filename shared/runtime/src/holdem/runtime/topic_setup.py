"""The game's topics made sure of: created where the principal may (admin), else checked to exist
with the one partition count co-partitioning needs, and to have serving leaders."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    RequestTimedOutError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    for_code,
)

from holdem.core.wire.connection import KafkaConnection, as_connection, start_or_close
from holdem.core.wire.topics import Topics, snapshot_topic

SNAPSHOTTED = ("dealer", "wallet", "settlement", "query")  # the services whose state is snapshotted

log = logging.getLogger(__name__)


class TopicPartitionMismatchError(RuntimeError):
    """An existing topic has another partition count than asked: co-partitioning would break."""


__all__ = ["TopicPartitionMismatchError", "ensure_topics"]

MAX_REPLICAS = 3  # an operator's cluster keeps three copies of every record
MIN_INSYNC = 2  # and acknowledges a write (acks=all) once two of them have it
# A snapshot topic's segments roll every 10 minutes or 64 MiB, so the cleaner can compact them:
# a service's snapshot topic stays a few snapshots per partition, not its whole history.
SNAPSHOT_SEGMENTS = {"segment.ms": str(10 * 60 * 1000), "segment.bytes": str(64 * 2**20)}


async def _connected_admin(connection: KafkaConnection, deadline: float) -> AIOKafkaAdminClient:
    # A broker still starting (compose, CI) refuses connections for a while: retry until due.
    bootstrap = connection.bootstrap
    while True:
        admin = AIOKafkaAdminClient(**connection.kwargs(), request_timeout_ms=10_000)
        try:
            async with asyncio.timeout(max(deadline - time.monotonic(), 0.1)):
                await admin.start()
            return admin
        except (KafkaConnectionError, TimeoutError):
            await admin.close()
            if time.monotonic() >= deadline:
                raise
            log.info("kafka at %s not reachable yet, retrying", bootstrap)
            await asyncio.sleep(1.0)


async def _partition_counts(
    admin: AIOKafkaAdminClient, names: list[str]
) -> dict[str, tuple[int, int]]:
    """(partitions, partitions with a leader) per topic that the broker knows."""
    described = await admin.describe_topics(names)
    hidden = [
        t["topic"] for t in described if t["error_code"] == TopicAuthorizationFailedError.errno
    ]
    if hidden:
        raise TopicAuthorizationFailedError(f"this principal may not describe {hidden}")
    return {
        t["topic"]: (len(t["partitions"]), sum(1 for p in t["partitions"] if p["leader"] >= 0))
        for t in described
        if t["error_code"] == 0
    }


async def ensure_topics(
    connection: KafkaConnection | str,
    topics: Topics | Iterable[str],
    partitions: int,
    replication: int | None = None,
    wait: float = 60.0,
) -> None:
    """Create the topics if missing and wait until every partition has a leader.

    Idempotent: existing topics are accepted if their partition count matches, since every
    topic must share one count for co-partitioning by player_id. Gives up (TimeoutError or
    KafkaConnectionError) after `wait` seconds, so a missing broker fails instead of hanging.
    A principal that may not create topics (the services: only admin creates them) gets the
    refusal as "already exists, check it": a missing topic then times out naming it.
    ``replication`` None: one replica per live broker, at most MAX_REPLICAS (1 on the
    single-node broker, 3 on a cluster); new topics get min.insync.replicas MIN_INSYNC (capped
    by the replicas), so losing one broker of three neither stops nor loses acknowledged writes.
    """
    connection = as_connection(connection)
    if isinstance(topics, Topics):  # the game's topics and each service's snapshot topic
        names = [*topics.names(), *(snapshot_topic(topics, s) for s in SNAPSHOTTED)]
    else:
        names = list(topics)
    if partitions < 1 or (replication is not None and replication < 1):
        raise ValueError(f"partitions and replication must be >= 1: {partitions}, {replication}")
    deadline = time.monotonic() + wait
    admin = await _connected_admin(connection, deadline)
    try:
        if replication is None:  # metadata lists the live brokers; it needs no authorization
            brokers = len((await admin.describe_cluster())["brokers"])
            replication = max(1, min(MAX_REPLICAS, brokers))
        configs = {"min.insync.replicas": str(min(MIN_INSYNC, replication))}
        # A snapshot topic keeps the latest record per key (partition): compacted. The cleaner
        # compacts only closed segments: with Kafka's defaults (1 GiB, 7 days) an hour of
        # snapshots every few seconds stays whole (the soak saw 400 MB/h per service).
        compacted = {**configs, "cleanup.policy": "compact", **SNAPSHOT_SEGMENTS}
        new = [
            NewTopic(name, partitions, replication, topic_configs=compacted if _is_snapshots(name)
                     else configs)
            for name in names
        ]  # fmt: skip
        response = await _create(admin, new, deadline)
        existing = []
        for name, code, *_ in response.topic_errors:
            if code in (TopicAlreadyExistsError.errno, TopicAuthorizationFailedError.errno):
                existing.append(name)
            elif code != 0:
                raise for_code(code)(f"creating topic {name}")
        # Creation returns before leaders are elected; producing then would hit retriable errors.
        while True:
            try:
                counts = await _partition_counts(admin, names)
            except (KafkaTimeoutError, RequestTimedOutError):
                # One slow metadata answer (a loaded broker) is not the deadline: ask again.
                if time.monotonic() >= deadline:
                    raise
                log.info("describing the topics timed out, asking again")
                continue
            wrong = {
                n: counts[n][0] for n in existing if counts.get(n, (partitions,))[0] != partitions
            }
            if wrong:
                raise TopicPartitionMismatchError(f"expected {partitions} partitions: {wrong}")
            if all(counts.get(name) == (partitions, partitions) for name in names):
                break
            if time.monotonic() >= deadline:
                raise TimeoutError(f"topics not ready after {wait}s: {counts}")
            await asyncio.sleep(0.1)
    finally:
        await admin.close()
    await _wait_until_leaders_serve(connection, names, partitions, deadline)


async def _create(admin: AIOKafkaAdminClient, new: list[NewTopic], deadline: float) -> Any:
    # The client gives up on one request after its 10 s timeout, whatever the broker's own wait:
    # a controller slower than that (a loaded machine) is asked again until this call's deadline.
    # Asking again is safe: a topic the first ask created answers TOPIC_ALREADY_EXISTS.
    while True:
        left = max(deadline - time.monotonic(), 0.1)
        try:
            async with asyncio.timeout(left):
                return await admin.create_topics(new, timeout_ms=int(left * 1000))
        except (KafkaTimeoutError, RequestTimedOutError):
            if time.monotonic() >= deadline:
                raise
            log.info("creating the topics timed out, asking again")
            await asyncio.sleep(0.5)


def _is_snapshots(name: str) -> bool:
    return name.endswith(".snapshots")


async def _wait_until_leaders_serve(
    connection: KafkaConnection, names: list[str], partitions: int, deadline: float
) -> None:
    # Metadata names a leader a moment before that broker serves the partition (a produce then
    # gets NOT_LEADER and is retried). ListOffsets needs a serving leader and aiokafka retries it,
    # but only for one request timeout (10 s): a leader slower than that on a loaded machine
    # (compose's topic-init failed so) is asked again, until this call's own deadline.
    consumer = AIOKafkaConsumer(**connection.kwargs(), request_timeout_ms=10_000)
    async with asyncio.timeout(max(deadline - time.monotonic(), 0.1)):
        await start_or_close(consumer)
    try:
        tps = [TopicPartition(name, p) for name in names for p in range(partitions)]
        while True:
            try:
                async with asyncio.timeout(max(deadline - time.monotonic(), 0.1)):
                    await consumer.end_offsets(tps)
                return
            except KafkaTimeoutError:
                if time.monotonic() >= deadline:
                    raise
                log.info("partition leaders not serving yet, asking again")
    finally:
        await consumer.stop()
