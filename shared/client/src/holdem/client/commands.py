"""Commands as the SDK builds them: idempotency keys generated or given, and where each lands.

Every command is a record on the commands topic keyed by ``player_id`` (UTF-8). The SDK sends it
through aiokafka's default partitioner, ``aiokafka.partitioner.DefaultPartitioner``: it hashes the
key with ``murmur2`` (a port of Java's ``org.apache.kafka.common.utils.Utils.murmur2``, same seed
0x9747b28c) and takes ``(hash & 0x7fffffff) % partitions``, which is what Java's
``BuiltInPartitioner.partitionForKey`` computes (``Utils.toPositive(murmur2(key)) % n``). So a
Java producer (or librdkafka with ``partitioner=murmur2_random``; its default
``consistent_random`` is another hash) keyed the same way lands on the same partition, and every
topic of one player shares one partition number (co-partitioning). The hashes below are the
vectors of Kafka's own ``UtilsTest``, as unsigned 32-bit values (Java prints them signed:
-973932308, -790332482):

>>> from aiokafka.partitioner import murmur2
>>> murmur2(b"21"), murmur2(b"foobar"), murmur2(b"abc")
(3321034988, 3504634814, 479470107)
>>> partition_for("foobar", 3)
0
"""

from __future__ import annotations

import functools
import uuid
from datetime import UTC, datetime
from typing import Any, TypeVar

from aiokafka.partitioner import murmur2

from holdem.core.contracts import Command

C = TypeVar("C", bound=Command)


def new_id() -> str:
    """A fresh random id (32 hex digits) for an ``event_id``, ``command_id`` or ``round_id``."""
    return uuid.uuid4().hex


def command(
    model: type[C],
    player_id: str,
    *,
    command_id: str | None = None,
    event_id: str | None = None,
    **fields: Any,
) -> C:
    """A command with its envelope filled in. ``command_id`` is the idempotency key: give your
    own (e.g. your platform's transaction id) to make a resend safe across your restarts; the
    same id with the same body has one effect, with another body a ``duplicate`` rejection.
    ``event_id`` identifies this record; both are generated when not given.

    >>> from holdem.core.contracts import Deposit
    >>> d = command(Deposit, "alice", command_id="tx-1", currency="EUR", amount=10_000)
    >>> d.command_id, d.player_id, d.amount, len(d.event_id)
    ('tx-1', 'alice', 10000, 32)
    """
    return model(
        event_id=event_id or new_id(),
        command_id=command_id or new_id(),
        player_id=player_id,
        occurred_at=datetime.now(UTC),
        **fields,
    )


# aiokafka's murmur2 is pure Python and every record a service reads is checked with it: a
# bounded cache of the hashes of recent keys (players come back every round) does each once.
_murmur2 = functools.lru_cache(maxsize=1 << 16)(murmur2)


def partition_for(player_id: str, partitions: int) -> int:
    """The partition of every topic that holds ``player_id``'s records (see the module doc)."""
    return partition_for_key(player_id.encode(), partitions)


def partition_for_key(key: bytes, partitions: int) -> int:
    """Where Kafka's default partitioner puts a record with this key: what the services check
    every record against (a record elsewhere is refused as ``wrong_partition``)."""
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    hashed: int = _murmur2(key)
    return (hashed & 0x7FFFFFFF) % partitions
