"""Where a keyed record lands: Kafka's default partitioner, ``murmur2`` of the key.

Every record is keyed by ``player_id`` (UTF-8). Java's ``BuiltInPartitioner.partitionForKey``
computes ``Utils.toPositive(murmur2(key)) % n`` with seed 0x9747b28c, and so do aiokafka's
default partitioner and librdkafka's ``murmur2_random``: a record keyed the same way lands on the
same partition number in every topic (co-partitioning). The vectors are those of Kafka's own
``UtilsTest``, unsigned (Java prints them signed: -973932308, -790332482):

>>> murmur2(b"21"), murmur2(b"foobar"), murmur2(b"abc")
(3321034988, 3504634814, 479470107)
>>> partition_for("foobar", 3)
0
"""

from __future__ import annotations

import functools

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's 32-bit murmur2 of ``data`` (``org.apache.kafka.common.utils.Utils.murmur2``)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest == 3:
        h ^= data[whole + 2] << 16
    if rest >= 2:
        h ^= data[whole + 1] << 8
    if rest >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


# Every record a service reads is checked against its key's partition: a bounded cache of recent
# keys' hashes (players come back every round) computes each once.
_cached_murmur2 = functools.lru_cache(maxsize=1 << 16)(murmur2)


def partition_for_key(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record with this key: what the services
    check every record against (a record elsewhere is refused as ``wrong_partition``)."""
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    return (_cached_murmur2(key) & 0x7FFFFFFF) % partitions


def partition_for(player_id: str, partitions: int) -> int:
    """The partition of every topic that holds ``player_id``'s records."""
    return partition_for_key(player_id.encode(), partitions)
