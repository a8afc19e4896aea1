"""``python -m holdem.client.seamless_run``: the reference operator wallet (seamless_sim) on Kafka,
as the operator principal: it reads the wallet's requests on ``holdem.wallet`` and answers on
``holdem.seamless.replies``, keyed by player_id, with the faults asked for (ADR 015).

Its books live in memory and are rebuilt by reading the requests from the beginning (every
tx_id is applied once, so answering old requests again only sends duplicates)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import ContractError, dump, parse
from holdem.core.contracts.seamless import SeamlessRequest
from holdem.core.wire.connection import KafkaConnection, start_or_close
from holdem.core.wire.headers import Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics, topics_from_env

log = logging.getLogger(__name__)


async def serve(
    connection: KafkaConnection,
    topics: Topics,
    operator: FaultyOperator,
    *,
    step_s: float = 0.1,
    stopping: asyncio.Event | None = None,
) -> None:
    """Answer requests until ``stopping`` is set; one step of the faulty line every ``step_s``
    seconds (so a delay of n steps is n × step_s seconds)."""
    stopping = stopping or asyncio.Event()
    consumer = AIOKafkaConsumer(
        **connection.kwargs(),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",  # only what the wallet committed
        auto_offset_reset="earliest",
    )
    producer = AIOKafkaProducer(**connection.kwargs(), acks="all", linger_ms=0)
    await start_or_close(consumer)
    try:
        await start_or_close(producer)
    except BaseException:
        await consumer.stop()
        raise
    try:
        partitions = await producer.partitions_for(topics.wallet)
        consumer.assign([TopicPartition(topics.wallet, p) for p in partitions])
        line = asyncio.create_task(_line(producer, topics, operator, step_s, stopping))
        while not stopping.is_set():
            batches = await consumer.getmany(timeout_ms=100)
            for records in batches.values():
                for record in records:
                    _receive(operator, record.value)
        await line
    finally:
        with contextlib.suppress(Exception):
            await consumer.stop()
        await producer.stop()


def _receive(operator: FaultyOperator, raw: bytes | None) -> None:
    try:
        message = parse("wallet", raw or b"")
    except ContractError as error:
        log.warning("unreadable record: %s", error)
        return
    if isinstance(message, SeamlessRequest):  # the rest of the wallet's log is not for us
        operator.receive(message)


async def _line(
    producer: AIOKafkaProducer,
    topics: Topics,
    operator: FaultyOperator,
    step_s: float,
    stopping: asyncio.Event,
) -> None:
    while not stopping.is_set():
        await asyncio.sleep(step_s)
        for reply in operator.step():
            key = reply.player_id.encode()
            headers = Stamp(operator_of_prefix(topics.prefix)).headers()  # ADR 021
            await producer.send_and_wait(
                topics.seamless_replies, dump(reply), key=key, headers=headers
            )


def main(argv: list[str] | None = None) -> None:
    """Run the reference operator wallet against a deployment (the HOLDEM_KAFKA_* principal)."""
    parser = argparse.ArgumentParser(
        prog="python -m holdem.client.seamless_run", description=main.__doc__
    )
    parser.add_argument("--prefix", default=None, help="topic prefix (else HOLDEM_TOPIC_PREFIX)")
    parser.add_argument("--opening", type=int, default=100_000, help="a new player's balance")
    parser.add_argument("--silence", type=float, default=0.0, help="share of requests lost")
    parser.add_argument("--drop", type=float, default=0.0, help="share of answers lost")
    parser.add_argument("--duplicate", type=float, default=0.0, help="share answered twice")
    parser.add_argument("--reject-rate", type=float, default=0.0, help="share of debits refused")
    parser.add_argument("--max-delay", type=int, default=0, help="delay of an answer, in steps")
    parser.add_argument("--step", type=float, default=0.1, help="seconds per step")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    topics = Topics().with_prefix(args.prefix) if args.prefix else topics_from_env()
    faults = Faults(args.silence, args.drop, args.duplicate, args.max_delay, args.reject_rate)
    operator = FaultyOperator(OperatorWallet(opening=args.opening), faults, seed=args.seed)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(KafkaConnection.from_env(), topics, operator, step_s=args.step))


if __name__ == "__main__":
    main()
