"""Does the broker answer a waiting read_committed fetch on a transaction's commit? (ADR-free
background of ``holdem.runtime.fetch_wait``: its long idle wait costs no latency only if so.)

A read_committed consumer fetches with a ``--wait-ms`` wait (5 s: far longer than a commit);
``--commits`` times, one record is written in a transaction of its own while that fetch waits,
and the time from the commit's return to the record in the consumer's hands is taken. Woken on
the commit, each is a few ms (the baseline: the same with a read_uncommitted consumer, which the
record's append alone wakes); not woken, each would be about the wait. Printed, never asserted."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from holdem.core.wire.connection import KafkaConnection
from holdem.harness.load import percentile
from holdem.ops.launcher import LocalBroker
from holdem.runtime.topic_setup import ensure_topics


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=20, help="records, one per transaction")
    parser.add_argument("--wait-ms", type=int, default=5000, help="the consumer's fetch wait")
    args, _ = parser.parse_known_args(argv)  # run.py's own arguments pass through
    return args


async def wake_times(
    admin: KafkaConnection, isolation: str, args: argparse.Namespace
) -> list[float]:
    """Seconds from each commit's return to its record read, with ``isolation``."""
    name = f"bench-wake-{uuid.uuid4().hex[:8]}"
    await ensure_topics(admin, [name], 1)
    tp = TopicPartition(name, 0)
    consumer = AIOKafkaConsumer(
        **admin.kwargs(),
        isolation_level=isolation,
        fetch_max_wait_ms=args.wait_ms,
        auto_offset_reset="earliest",
    )
    producer = AIOKafkaProducer(**admin.kwargs(), transactional_id=f"{name}-txn")
    await consumer.start()
    await producer.start()
    times = []
    try:
        consumer.assign([tp])
        await consumer.getmany(timeout_ms=1000)  # its position known, a fetch waiting
        for _ in range(args.commits):
            await asyncio.sleep(0.3)  # the consumer's next fetch is at the broker, waiting
            async with producer.transaction():
                await producer.send_and_wait(name, b"x")
            committed = time.monotonic()
            got = 0
            while not got:
                batch = await consumer.getmany(tp, timeout_ms=2 * args.wait_ms)
                got = len(batch.get(tp, []))
            times.append(time.monotonic() - committed)
    finally:
        await producer.stop()
        await consumer.stop()
    return times


async def main(args: argparse.Namespace) -> None:
    broker = LocalBroker()
    await asyncio.to_thread(broker.up)
    try:
        admin = broker.connection("admin")
        results = {
            isolation: await wake_times(admin, isolation, args)
            for isolation in ("read_committed", "read_uncommitted")
        }
    finally:
        await asyncio.to_thread(broker.down)
    print(f"commit -> record read, a fetch waiting up to {args.wait_ms} ms, {args.commits} each:")
    for isolation, times in results.items():
        print(
            f"  {isolation:17} p50 {1000 * percentile(times, 0.5):7.1f} ms, "
            f"max {1000 * max(times):7.1f} ms"
        )


if __name__ == "__main__":
    asyncio.run(main(parse_args(sys.argv[1:])))
