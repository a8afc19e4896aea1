"""The adaptive fetch wait on the real broker (issue 28, "idle is idle"): the services' group
consumer, idle, sends its fetches with the long wait; the first record brings the short one
back; and a read_committed fetch waiting at the broker is answered on the transaction's commit,
so the long wait does not delay the first record. Asserted on the fetch requests sent (their
wait, their order against the commit), never on a time."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from support.kafka import Cluster

from holdem.runtime.fetch_wait import BUSY_MS, IDLE_MS, FetchWait
from holdem.runtime.kafka import KafkaGroupConsumer
from holdem.runtime.topic_setup import ensure_topics
from holdem.runtime.transport import GroupSettings

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(180)]
POLLS = 600  # at most this many polls of 100 ms (a bound, not a timing): a minute and more


class Quiet:
    async def on_partitions_revoked(self, revoked: set[Any]) -> None:
        pass

    async def on_partitions_assigned(self, assigned: set[Any]) -> None:
        pass


@dataclass
class Fetch:
    wait_ms: int
    records: bool = False  # whether its answer held any record bytes


@dataclass
class Fetches:
    """Every FetchRequest the consumer's client sends, in order, with its answer."""

    sent: list[Fetch] = field(default_factory=list)

    def wrap(self, client: Any) -> None:
        send = client.send

        async def recording(node_id: int, request: Any, *args: Any, **kwargs: Any) -> Any:
            if type(request).__name__ != "FetchRequest":
                return await send(node_id, request, *args, **kwargs)
            fetch = Fetch(request._max_wait_ms)
            self.sent.append(fetch)
            response = await send(node_id, request, *args, **kwargs)
            fetch.records = any(bool(part[-1]) for _, parts in response.topics for part in parts)
            return response

        client.send = recording


async def started(kafka: Cluster, name: str) -> tuple[KafkaGroupConsumer, Fetches]:
    await ensure_topics(kafka.admin, [name], partitions=1, wait=60)
    consumer = KafkaGroupConsumer(
        kafka.admin,
        GroupSettings(
            group_id=name,
            client_id=name,
            max_records=500,
            session_timeout_ms=10_000,
            heartbeat_ms=1_000,
            max_poll_interval_ms=300_000,
        ),
    )
    consumer.subscribe([name], Quiet())
    await consumer.start()
    fetches = Fetches()
    fetches.wrap(consumer.consumer._client)
    return consumer, fetches


async def poll_until(consumer: KafkaGroupConsumer, done: Any) -> int:
    """Poll as the service's loop does until ``done()``; the records seen meanwhile."""
    seen = 0
    for _ in range(POLLS):
        batch = await consumer.getmany(timeout_ms=100, max_records=500)
        seen += sum(len(records) for records in batch.values())
        if done(seen):
            return seen
    raise AssertionError(f"not done after {POLLS} polls")


def changed_once(waits: list[int], before: int, after: int) -> bool:
    """``waits`` are some ``before`` (maybe none) then only ``after``, at least one."""
    changed = waits.index(after) if after in waits else len(waits)
    return (
        changed < len(waits)
        and set(waits[:changed]) <= {before}
        and set(waits[changed:]) == {after}
    )


async def commit_one(kafka: Cluster, name: str) -> None:
    producer = AIOKafkaProducer(
        **kafka.admin.kwargs(), transactional_id=f"{name}-txn", enable_idempotence=True
    )
    await producer.start()
    try:
        async with producer.transaction():
            await producer.send_and_wait(name, b"{}", key=b"k")
    finally:
        await producer.stop()


async def test_an_idle_consumer_fetches_with_the_long_wait_and_records_bring_the_short_back(
    kafka: Cluster,
) -> None:
    name = f"fetch-wait-{uuid.uuid4().hex[:8]}"
    consumer, fetches = await started(kafka, name)
    try:
        # Idle: the wait grows, once, and every fetch sent after that carries it (a join slower
        # than the idle time can make even the first fetch a long one).
        await poll_until(
            consumer,
            lambda _: len(fetches.sent) >= 3 and fetches.sent[-1].wait_ms == IDLE_MS,
        )
        assert changed_once([fetch.wait_ms for fetch in fetches.sent], BUSY_MS, IDLE_MS)
        assert consumer.fetch_wait.changes == 1

        await commit_one(kafka, name)
        await poll_until(consumer, lambda seen: seen == 1)
        assert consumer.fetch_wait.wait_ms == BUSY_MS
        after_record = len(fetches.sent)  # a long one built before may still be sent after
        await poll_until(
            consumer,
            lambda _: [f.wait_ms for f in fetches.sent[-2:]] == [BUSY_MS, BUSY_MS],
        )
        assert changed_once([f.wait_ms for f in fetches.sent[after_record:]], IDLE_MS, BUSY_MS)
        assert consumer.fetch_wait.changes == 2
    finally:
        await consumer.stop()


async def test_a_read_committed_fetch_waiting_at_the_broker_is_answered_on_the_commit(
    kafka: Cluster,
) -> None:
    """The fetch that brings the record is one sent before the commit with a wait far longer
    than the test's bound: the broker answered it on the commit, not when its wait ran out."""
    name = f"fetch-wake-{uuid.uuid4().hex[:8]}"
    consumer, fetches = await started(kafka, name)
    long_ms = 120_000  # past the test's timeout: only a woken fetch can bring the record in time
    consumer.fetch_wait = FetchWait(idle_ms=long_ms, idle_after_s=0.5)
    try:
        await poll_until(consumer, lambda _: fetches.sent and fetches.sent[-1].wait_ms == long_ms)
        before_commit = len(fetches.sent)
        await commit_one(kafka, name)
        await poll_until(consumer, lambda seen: seen == 1)
        carrying = [n for n, fetch in enumerate(fetches.sent) if fetch.records]
        assert carrying, "no fetch answer held the record"
        assert carrying[0] < before_commit  # sent before the commit, answered on it
        assert fetches.sent[carrying[0]].wait_ms == long_ms
    finally:
        await consumer.stop()
