"""Numba kernels of the hand evaluator, callable from other njit code (tables passed in).

Every kernel takes ``tables = batch.kernel_tables(size)``, the tuple
``(card_key, flush_suit, flush, offsets, plain)`` for hands of that size: passing the arrays
keeps numba from freezing them into machine code, and the whole tuple fits the L2 cache.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt
from numba import njit

from holdem.core.evaluator_tables import HASH_LOW, HASH_SHIFT, SUIT_BITS

SUIT_LOW = (1 << SUIT_BITS) - 1

KernelTables: TypeAlias = tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int8],
    npt.NDArray[np.int16],
    npt.NDArray[np.int32],
    npt.NDArray[np.int16],
]


@njit(cache=True, inline="always")
def plain_value(rank_sum: int, tables: KernelTables) -> int:
    """Value of a hand without a flush from the rank part of its key sum."""
    return int(tables[4][tables[3][rank_sum >> HASH_SHIFT] + (rank_sum & HASH_LOW)])


@njit(cache=True)
def eval_cards(cards: npt.NDArray[np.uint8], tables: KernelTables) -> int:
    """Value of one hand: a 1-d array of 5, 6 or 7 card codes (tables for that size)."""
    key_sum = 0
    for card in cards:
        key_sum += tables[0][card]
    return value_of_sum(key_sum, cards, tables)


@njit(cache=True, inline="always")
def value_of_sum(key_sum: int, cards: npt.NDArray[np.uint8], tables: KernelTables) -> int:
    """Value of the hand ``cards`` whose keys sum to ``key_sum`` (computed by the caller)."""
    suit = tables[1][key_sum & SUIT_LOW]
    if suit < 0:
        return plain_value(key_sum >> SUIT_BITS, tables)
    mask = 0
    for card in cards:
        if card & 3 == suit:
            mask |= 1 << (int(card) >> 2)
    return int(tables[2][mask])


@njit(cache=True, inline="always")
def eval7(a: int, b: int, c: int, d: int, e: int, f: int, g: int, tables: KernelTables) -> int:
    """Value of seven cards given one by one (``tables`` for size 7)."""
    key = tables[0]
    key_sum = key[a] + key[b] + key[c] + key[d] + key[e] + key[f] + key[g]
    suit = tables[1][key_sum & SUIT_LOW]
    if suit < 0:
        return plain_value(key_sum >> SUIT_BITS, tables)
    mask = 0
    for card in (a, b, c, d, e, f, g):
        if card & 3 == suit:
            mask |= 1 << (card >> 2)
    return int(tables[2][mask])


@njit(cache=True)
def eval_batch7(
    hands: npt.NDArray[np.uint8], tables: KernelTables, out: npt.NDArray[np.int32]
) -> None:
    """Values of every row of an (n, 7) array into ``out``."""
    for i in range(hands.shape[0]):
        out[i] = eval7(
            int(hands[i, 0]),
            int(hands[i, 1]),
            int(hands[i, 2]),
            int(hands[i, 3]),
            int(hands[i, 4]),
            int(hands[i, 5]),
            int(hands[i, 6]),
            tables,
        )


@njit(cache=True)
def eval_batch(
    hands: npt.NDArray[np.uint8], tables: KernelTables, out: npt.NDArray[np.int32]
) -> None:
    """Values of every row of an (n, 5|6|7) array into ``out``."""
    key, width = tables[0], hands.shape[1]
    for i in range(hands.shape[0]):
        key_sum = 0
        for j in range(width):
            key_sum += key[hands[i, j]]
        suit = tables[1][key_sum & SUIT_LOW]
        if suit < 0:
            out[i] = plain_value(key_sum >> SUIT_BITS, tables)
            continue
        mask = 0
        for j in range(width):
            card = int(hands[i, j])
            if card & 3 == suit:
                mask |= 1 << (card >> 2)
        out[i] = tables[2][mask]


@njit(cache=True)
def place_buckets(
    lows: npt.NDArray[np.int64],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    order: npt.NDArray[np.int64],
) -> npt.NDArray[np.int32]:
    """First-fit offsets for buckets ``lows[starts[b]:ends[b]]``, placed in ``order``."""
    used = np.zeros(4 * len(lows) + 2 * HASH_LOW + 2, dtype=np.bool_)
    placed = np.zeros(len(starts), dtype=np.int32)
    first_free = 0
    for bucket in order:
        offset = max(0, first_free - lows[starts[bucket]])
        while True:
            fits = True
            for k in range(starts[bucket], ends[bucket]):
                if used[offset + lows[k]]:
                    fits = False
                    break
            if fits:
                break
            offset += 1
        for k in range(starts[bucket], ends[bucket]):
            used[offset + lows[k]] = True
        placed[bucket] = offset
        while used[first_free]:
            first_free += 1
    return placed
