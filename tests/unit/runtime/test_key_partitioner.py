"""The services' producers place a keyed record where Kafka's default partitioner does, with the
key's murmur2 hash taken from the bounded cache (aiokafka's pure-Python hash: 3.2 us a record)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from aiokafka.partitioner import DefaultPartitioner

from holdem.core.wire import partitioning
from holdem.runtime import kafka


def test_a_key_lands_where_kafkas_default_partitioner_puts_it() -> None:
    default = DefaultPartitioner()
    keys = [f"player-{i}".encode() for i in range(2_000)] + [b"", b"\x00\xff", "é".encode()]
    for count in (1, 2, 3, 7, 16, 64):
        every = list(range(count))
        for key in keys:
            assert kafka.key_partitioner(key, every, every) == default(key, every, every), key
    assert kafka.key_partitioner(None, [0, 1, 2], [2]) == 2  # no key: among those available


def test_a_players_records_hash_his_key_once() -> None:
    # A cost counter: 10 players, 100 records sent, 10 hashes (aiokafka's: 100).
    players = [f"p-{uuid.uuid4().hex}".encode() for _ in range(10)]
    before = partitioning._cached_murmur2.cache_info().misses
    for n in range(100):
        kafka.key_partitioner(players[n % 10], [0, 1, 2], [0, 1, 2])
    assert partitioning._cached_murmur2.cache_info().misses - before == 10


async def test_the_services_producer_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    made: dict[str, Any] = {}

    class Producer:
        def __init__(self, **kwargs: Any) -> None:
            made.update(kwargs)

    async def started(client: object) -> None:
        pass

    monkeypatch.setattr(kafka, "AIOKafkaProducer", Producer)
    monkeypatch.setattr(kafka, "start_or_close", started)
    monkeypatch.setattr(kafka, "install", lambda: None)
    await kafka.KafkaProducer("127.0.0.1:9", "holdem-wallet-0").start()
    assert made["partitioner"] is kafka.key_partitioner
    assert made["transactional_id"] == "holdem-wallet-0"
