"""Lookup tables of the hand evaluator: their definition, built from first principles, and the
copy shipped in ``evaluator_data`` (decoded in memory: no file, no environment, no cache).

A hand value is the dense rank of its best five cards among the 7,462 distinct five-card hands
(0 = 7-5-4-3-2 offsuit, 7,461 = royal flush). Each card has a key
``RANK_KEYS[rank] << 12 | 1 << 3 * suit``; the sum of a hand's keys tells, in its low 12 bits,
how many cards of each suit it holds (so whether it has a flush) and, above them, which multiset
of ranks it holds (the rank keys have distinct sums for every multiset of 5, 6 or 7 ranks).
Non-flush hands are then one lookup by the rank sum; flush hands one lookup by the 13-bit mask of
the flush suit's ranks (with 7 cards or fewer a flush beats anything but a straight flush).

``build_tables()`` computes every table from the definitions here (about a second in pure
Python); ``scripts/generate_core_data.py`` encodes the result into the generated module
``evaluator_data`` and ``shipped_tables()`` decodes it. tests/unit/core/test_evaluator.py rebuilds
the tables and compares them with the shipped copy exactly.
"""

from __future__ import annotations

import base64
import itertools
import zlib
from functools import cache
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

# Distinct sums for every multiset of 5, 6 or 7 ranks with at most 4 of a rank (checked by
# the table build); the same idea as Kenneth Shackleton's SKPokerEval keys.
RANK_KEYS: Final = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)
SUIT_BITS: Final = 12
TABLE_VERSION: Final = 1
HASH_SHIFT: Final = 8
HASH_LOW: Final = (1 << HASH_SHIFT) - 1

# Strength of a best five: (category, tie-breaking ranks high to low); compared as tuples.
Strength = tuple[int, ...]


class Tables(NamedTuple):
    """The arrays every evaluation path reads (numba kernels take them as arguments)."""

    card_key: npt.NDArray[np.int64]  # 52: rank key << 12 | 1 << 3*suit
    flush_suit: npt.NDArray[np.int8]  # 4096: suit with >= 5 cards for a suit-count sum, or -1
    flush: npt.NDArray[np.int16]  # 8192: value of the best five of a one-suit rank mask
    rank_sums: tuple[npt.NDArray[np.int64], ...]  # per size 5, 6, 7: every rank-key sum, sorted
    rank_values: tuple[npt.NDArray[np.int16], ...]  # per size 5, 6, 7: its value (no flush)
    category: npt.NDArray[np.int8]  # 7462: HandCategory of each value (9 = royal flush)


def straight_high(mask: int) -> int:
    """Highest rank ending a straight in a 13-bit rank mask (3 for the wheel), or -1.

    >>> straight_high(0b1000000001111), straight_high(0b11111 << 8), straight_high(0b10111)
    (3, 12, -1)
    """
    for high in range(12, 3, -1):
        run = 0b11111 << (high - 4)
        if mask & run == run:
            return high
    wheel = 0b1000000001111
    return 3 if mask & wheel == wheel else -1


def flush_strength(mask: int) -> Strength:
    """Best five of one suit's ranks (a 13-bit mask with at least five bits)."""
    high = straight_high(mask)
    if high >= 0:
        return (8, high)
    return (5, *[r for r in range(12, -1, -1) if mask >> r & 1][:5])


def plain_strength(counts: tuple[int, ...]) -> Strength:
    """Best five of a rank multiset (counts per rank) when no flush is possible."""
    desc = [r for r in range(12, -1, -1) if counts[r]]
    by = {n: [r for r in desc if counts[r] == n] for n in (2, 3, 4)}
    if by[4]:
        quad = by[4][0]
        return (7, quad, next(r for r in desc if r != quad))
    if by[3] and len(by[3]) + len(by[2]) >= 2:
        trip = by[3][0]
        return (6, trip, max(by[3][1:] + by[2]))
    high = straight_high(sum(1 << r for r in desc))
    if high >= 0:
        return (4, high)
    if by[3]:
        return (3, by[3][0], *[r for r in desc if r != by[3][0]][:2])
    if len(by[2]) >= 2:
        top, low = by[2][:2]
        return (2, top, low, next(r for r in desc if r not in (top, low)))
    if by[2]:
        return (1, by[2][0], *[r for r in desc if r != by[2][0]][:3])
    return (0, *desc[:5])


def rank_multisets(size: int) -> list[tuple[int, ...]]:
    """Every rank-count vector of ``size`` cards (at most four of a rank)."""
    out = []
    for combo in itertools.combinations_with_replacement(range(13), size):
        counts = tuple(combo.count(r) for r in range(13))
        if max(counts) <= 4:
            out.append(counts)
    return out


def build_tables() -> Tables:
    """Build every table from the definitions above (about a second in pure Python)."""
    five_masks = [m for m in range(8192) if m.bit_count() == 5]
    multisets = {size: rank_multisets(size) for size in (5, 6, 7)}
    classes = sorted(
        {plain_strength(c) for c in multisets[5]} | {flush_strength(m) for m in five_masks}
    )
    assert len(classes) == 7462, len(classes)
    dense = {strength: value for value, strength in enumerate(classes)}
    flush = np.zeros(8192, dtype=np.int16)
    for mask in range(8192):
        if mask.bit_count() >= 5:
            flush[mask] = dense[flush_strength(mask)]
    sums, values = [], []
    for size in (5, 6, 7):
        keys = [sum(n * k for n, k in zip(c, RANK_KEYS, strict=True)) for c in multisets[size]]
        assert len(set(keys)) == len(keys), f"rank keys collide for {size} cards"
        order = np.argsort(keys)  # one canonical order: ascending sums (the shipped copy's)
        sums.append(np.array(keys, dtype=np.int64)[order])
        plain = [dense[plain_strength(c)] for c in multisets[size]]
        values.append(np.array(plain, dtype=np.int16)[order])
    flush_suit = np.full(4096, -1, dtype=np.int8)
    for total in range(4096):
        counts = [total >> (3 * s) & 7 for s in range(4)]
        if sum(counts) <= 7 and max(counts) >= 5:
            flush_suit[total] = counts.index(max(counts))
    card_key = np.array(
        [RANK_KEYS[c >> 2] << SUIT_BITS | 1 << 3 * (c & 3) for c in range(52)], dtype=np.int64
    )
    category = np.array([s[0] + (s == (8, 12)) for s in classes], dtype=np.int8)
    return Tables(card_key, flush_suit, flush, tuple(sums), tuple(values), category)


# The shipped copy's layout: little-endian arrays, one after the other, zlib-compressed and
# base64-encoded; the rank sums as differences of their ascending order (they compress 6x).
_FIXED: Final = (("card_key", "<i8", 52), ("flush_suit", "i1", 4096), ("flush", "<i2", 8192))


def encode_tables(tables: Tables) -> str:
    """The text ``evaluator_data.ENCODED`` holds for ``tables`` (see ``decode_tables``)."""
    parts = [
        tables.card_key.astype("<i8"),
        tables.flush_suit.astype("i1"),
        tables.flush.astype("<i2"),
        tables.category.astype("i1"),
    ]
    for sums, values in zip(tables.rank_sums, tables.rank_values, strict=True):
        parts += [np.diff(sums, prepend=0).astype("<i4"), values.astype("<i2")]
    raw = b"".join(part.tobytes() for part in parts)
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def decode_tables(text: str, sizes: tuple[int, int, int]) -> Tables:
    """The tables from ``encode_tables``'s text; ``sizes``: how many rank sums for 5, 6, 7 cards."""
    raw = zlib.decompress(base64.b64decode(text))
    at = 0

    def take(dtype: str, count: int) -> npt.NDArray[np.generic]:
        nonlocal at
        array = np.frombuffer(raw, dtype=dtype, count=count, offset=at)
        at += array.nbytes
        return array

    card_key, flush_suit, flush = (take(dtype, n) for _, dtype, n in _FIXED)
    category = take("i1", 7462)
    sums, values = [], []
    for count in sizes:
        sums.append(np.cumsum(take("<i4", count), dtype=np.int64))
        values.append(take("<i2", count).astype(np.int16))
    if at != len(raw):
        raise ValueError(f"evaluator tables: {len(raw) - at} bytes left over")
    return Tables(
        card_key.astype(np.int64),
        flush_suit.astype(np.int8),
        flush.astype(np.int16),
        tuple(sums),
        tuple(values),
        category.astype(np.int8),
    )


@cache
def shipped_tables() -> Tables:
    """The tables shipped with the package (``evaluator_data``), decoded in memory: no file is
    read and nothing is built; equal to ``build_tables()`` (a test checks it)."""
    from holdem.core import evaluator_data

    return decode_tables(evaluator_data.ENCODED, evaluator_data.SIZES)
