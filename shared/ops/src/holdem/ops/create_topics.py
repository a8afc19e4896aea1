"""`python -m holdem.ops.create_topics`: create the game's topics and the services' snapshot
topics, as admin (compose's topic-init step, a new tenant, a fresh cluster)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError, for_code

from holdem.core.wire.connection import KafkaConnection, start_or_close
from holdem.core.wire.topics import Topics
from holdem.ops.acl import findings_topic
from holdem.runtime.topic_setup import ensure_topics

# The live auditor's findings (holdem.harness.auditor_service): one partition (read whole at
# its start), compacted: each finding is keyed by its own SHA-256, so compaction drops nothing
# and no time-based retention forgets what was already reported.
FINDINGS_CONFIG = {"cleanup.policy": "compact"}


async def ensure_findings_topic(
    connection: KafkaConnection, topics: Topics, wait: float = 60.0
) -> str:
    """Create the live auditor's findings topic if missing (as admin); its name."""
    name = findings_topic(topics)
    admin = AIOKafkaAdminClient(**connection.kwargs(), request_timeout_ms=10_000)
    await start_or_close(admin)
    try:
        brokers = len((await admin.describe_cluster())["brokers"])
        replication = max(1, min(3, brokers))
        config = {**FINDINGS_CONFIG, "min.insync.replicas": str(min(2, replication))}
        response = await admin.create_topics([NewTopic(name, 1, replication, topic_configs=config)])
        for _, code, *_ in response.topic_errors:
            if code not in (0, TopicAlreadyExistsError.errno):
                raise for_code(code)(f"creating topic {name}")
    finally:
        await admin.close()
    await ensure_topics(connection, [name], 1, replication, wait)  # leaders serving
    return name


def main(argv: list[str] | None = None) -> None:
    """`python -m holdem.ops.create_topics`: create the game's topics (compose's topic-init step),
    as the principal of the HOLDEM_KAFKA_* variables (admin)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--bootstrap", default=os.environ.get("HOLDEM_KAFKA_BOOTSTRAP"))
    parser.add_argument(
        "--partitions", type=int, default=int(os.environ.get("HOLDEM_PARTITIONS", "3"))
    )
    parser.add_argument(
        "--replication", type=int, default=None, help="default: one per broker, at most 3"
    )
    parser.add_argument("--prefix", default="", help="put every topic under PREFIX.")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds to wait for Kafka")
    args = parser.parse_args(argv)
    if not args.bootstrap:
        parser.error("--bootstrap or HOLDEM_KAFKA_BOOTSTRAP is required")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    topics = Topics().with_prefix(args.prefix) if args.prefix else Topics()
    connection = KafkaConnection.from_env(bootstrap=args.bootstrap)
    asyncio.run(ensure_topics(connection, topics, args.partitions, args.replication, args.wait))
    findings = asyncio.run(ensure_findings_topic(connection, topics, args.wait))
    print(" ".join(f"{name}:{args.partitions}" for name in topics.names()), f"{findings}:1")


if __name__ == "__main__":
    main()
