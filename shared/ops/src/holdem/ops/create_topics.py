"""`python -m holdem.ops.create_topics`: create the game's topics and the services' snapshot
topics, as admin (compose's topic-init step, a new tenant, a fresh cluster)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.runtime.topic_setup import ensure_topics


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
    print(" ".join(f"{name}:{args.partitions}" for name in topics.names()))


if __name__ == "__main__":
    main()
