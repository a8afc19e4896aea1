"""The batch hand evaluator: numba over whole arrays of hands, the no-flush table behind a
perfect hash small enough for the L2 cache.

The tables are holdem-core's (``evaluator_tables.shipped_tables()``, the ones ``evaluate`` uses);
the hash offsets are found once by first fit (``kernels.place_buckets``) and kept in the
holdem-math cache (``cache.cache_dir()``).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt

from holdem.core.evaluator_tables import HASH_LOW, HASH_SHIFT, TABLE_VERSION, shipped_tables
from holdem.math.cache import cache_dir, save_arrays
from holdem.math.kernels import KernelTables, eval_batch, eval_batch7, place_buckets


def perfect_hash(sums: npt.NDArray[np.int64]) -> npt.NDArray[np.int32]:
    """Offsets making ``offsets[s >> HASH_SHIFT] + (s & HASH_LOW)`` distinct over ``sums``.

    Buckets of sums sharing their high bits are placed, largest first, at the first offset
    where all their slots are free (hash and displace); the table ends up ~1.5x the key count,
    small enough for the L2 cache where the direct table (7.8 M slots) thrashes the TLB.
    """
    high, low = sums >> HASH_SHIFT, sums & HASH_LOW
    order = np.argsort(high, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(high[order]) != 0])
    ends = np.r_[starts[1:], len(order)]
    placed = place_buckets(low[order], starts, ends, np.argsort(starts - ends, kind="stable"))
    offsets = np.zeros(int(high.max()) + 1, dtype=np.int32)
    offsets[high[order[starts]]] = placed
    return offsets


@cache
def hashed_plain(size: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int16]]:
    """``(offsets, values)``: the no-flush table of ``size`` cards behind its perfect hash."""
    tables = shipped_tables()
    sums, values = tables.rank_sums[size - 5], tables.rank_values[size - 5]
    path = cache_dir() / f"evaluator-v{TABLE_VERSION}-hash{HASH_SHIFT}-{size}.npz"
    try:
        with np.load(path) as data:
            offsets = data["offsets"]
    except (OSError, KeyError, ValueError):
        offsets = perfect_hash(sums)
        save_arrays(path, offsets=offsets)
    slots = offsets[sums >> HASH_SHIFT] + (sums & HASH_LOW)
    table = np.zeros(int(slots.max()) + 1, dtype=np.int16)
    table[slots] = values
    if len(np.unique(slots)) != len(slots):
        raise RuntimeError(f"corrupt hash cache {path}: remove it")
    return offsets, table


def kernel_tables(size: int = 7) -> KernelTables:
    """``(card_key, flush_suit, flush, offsets, plain)``: the numba kernels' tables for a size."""
    if size not in (5, 6, 7):
        raise ValueError(f"hands have 5, 6 or 7 cards, not {size}")
    tables = shipped_tables()
    offsets, plain = hashed_plain(size)
    return tables.card_key, tables.flush_suit, tables.flush, offsets, plain


def evaluate_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Values of an (n, 5|6|7) array of card codes, one numba pass (int32, one per row)."""
    rows = np.ascontiguousarray(hands, dtype=np.uint8)
    if rows.ndim != 2:
        raise ValueError(f"hands must be a 2-d array, got shape {rows.shape}")
    if rows.size and int(rows.max()) > 51:
        raise ValueError("card codes are 0..51")
    out = np.empty(rows.shape[0], dtype=np.int32)
    kernel = eval_batch7 if rows.shape[1] == 7 else eval_batch
    kernel(rows, kernel_tables(rows.shape[1]), out)
    return out
