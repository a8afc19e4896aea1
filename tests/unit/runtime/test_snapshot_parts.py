"""A snapshot bigger than a producer request is written in parts and joined back exactly."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from holdem.runtime import snapshots
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


# Format 3 (ADR 048): a header line, then the state compressed with zlib.


def game_state(players: int) -> bytes:
    """A state shaped as the services' are: rows of ids, phases, amounts and times."""
    rng = random.Random(players)
    rows = [
        [f"p{p:04d}", f"p{p:04d}-r{n:07d}", "settled", rng.randrange(10**6),
         f"2026-12-06T20:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(10**6):06d}Z"]
        for p in range(players)
        for n in range(40)
    ]  # fmt: skip
    return json.dumps({"service": "wallet", "version": 7, "rows": rows}).encode()


def test_a_compressed_snapshot_reads_back_the_same_in_a_fraction_of_the_bytes() -> None:
    s = Snapshot("wallet", 2, {"t.holdem.wallet": 41}, game_state(100), {"p1/r1": "brand-a"})
    records = s.to_records(compressed=True)
    assert [k for k, _ in records] == [b"2"]
    value = records[0][1]
    assert value.startswith(b'{"format":3,') and parts_needed(value) == 1
    assert assemble([value]) == value
    assert Snapshot.from_bytes(value, "wallet", 2) == s
    assert len(value) * 4 < len(s.to_bytes())  # format 1 escapes every quote of the state


def test_a_compressed_snapshot_past_a_part_is_written_in_parts_and_joins_back() -> None:
    state = random.Random(3).randbytes(3 * CHUNK_BYTES).hex().encode()  # compresses to half
    s = Snapshot("wallet", 1, {"t": 5}, state)
    records = s.to_records(compressed=True)
    assert len(records) == 4 and all(len(v) < 1_000_000 for _, v in records)
    assert parts_needed(records[-1][1]) == 4
    assert Snapshot.from_bytes(assemble([v for _, v in records]), "wallet", 1) == s


def test_a_format_1_record_still_reads_and_a_reader_finds_either_after_the_other() -> None:
    old, new = Snapshot("wallet", 0, {"t": 1}, b"{}"), Snapshot("wallet", 0, {"t": 2}, b"[]")
    assert assemble([old.to_bytes(), new.to_bytes(compressed=True)]) == new.to_bytes(True)
    assert assemble([new.to_bytes(True), old.to_bytes()]) == old.to_bytes()
    assert Snapshot.from_bytes(old.to_bytes(), "wallet", 0) == old


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda v: v[:-4], "cut short"),
        (lambda v: v + b"more", "followed"),
        (lambda v: v[: v.index(b"\n") + 1] + b"not zlib", "unreadable"),
        (lambda v: v[: v.index(b"\n")], "cut short"),
        (lambda v: v.replace(b'"format":3', b'"format":9'), "format 9"),
    ],
)
def test_a_damaged_compressed_record_is_refused_with_a_typed_error(change: Any, why: str) -> None:
    value = Snapshot("wallet", 0, {"t": 1}, game_state(3)).to_bytes(compressed=True)
    with pytest.raises(SnapshotFormatError, match=why):
        Snapshot.from_bytes(change(value), "wallet", 0)


def test_a_state_that_inflates_past_the_bound_is_refused_not_held(monkeypatch: Any) -> None:
    monkeypatch.setattr(snapshots, "MAX_STATE_BYTES", 1_000)
    value = Snapshot("wallet", 0, {"t": 1}, b"0" * 5_000).to_bytes(compressed=True)
    assert len(value) < 200
    with pytest.raises(SnapshotFormatError, match="too big"):
        Snapshot.from_bytes(value, "wallet", 0)
