"""A snapshot bigger than a producer request is written in parts and joined back exactly."""

from __future__ import annotations

import json
import random

import pytest

from holdem.runtime.snapshots import (
    CHUNK_BYTES,
    Snapshot,
    SnapshotFormatError,
    assemble,
    parts_needed,
)


def snapshot(size: int, seed: int = 0) -> Snapshot:
    rng = random.Random(seed)
    state = json.dumps([rng.randrange(10**9) for _ in range(size // 10)]).encode()[:size]
    return Snapshot("wallet", 2, {"t.holdem.wallet": 41, "t.holdem.rounds": 7}, state)


def values(s: Snapshot) -> list[bytes]:
    return [value for _, value in s.to_records()]


def test_a_small_snapshot_is_one_record_keyed_by_its_partition() -> None:
    small = snapshot(1_000)
    assert small.to_records() == [(b"2", small.to_bytes())]
    assert parts_needed(small.to_bytes()) == 1
    assert assemble([small.to_bytes()]) == small.to_bytes()


def test_a_big_snapshot_is_parts_under_a_request_each_and_joins_back_exactly() -> None:
    big = snapshot(3 * CHUNK_BYTES)
    records = big.to_records()
    assert len(records) == 4 and [k for k, _ in records] == [b"2.0", b"2.1", b"2.2", b"2.3"]
    assert all(len(value) < 1_000_000 for _, value in records)
    assert parts_needed(records[-1][1]) == 4
    joined = assemble(values(big))
    assert joined == big.to_bytes()
    assert Snapshot.from_bytes(joined, "wallet", 2) == big


def test_older_records_before_the_parts_are_ignored() -> None:
    old, new = snapshot(4 * CHUNK_BYTES, seed=1), snapshot(2 * CHUNK_BYTES, seed=2)
    assert assemble([*values(old), b"not json", *values(new)]) == new.to_bytes()


def test_a_missing_or_altered_part_makes_the_snapshot_unusable() -> None:
    parts = values(snapshot(3 * CHUNK_BYTES))
    with pytest.raises(SnapshotFormatError, match="parts found"):
        assemble(parts[1:])
    altered = json.loads(parts[1])
    altered["data"] = altered["data"][:-8] + "AAAAAAA="
    with pytest.raises(SnapshotFormatError, match="do not make its body"):
        assemble([parts[0], json.dumps(altered).encode(), *parts[2:]])
