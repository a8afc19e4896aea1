"""The 22,100 flops by suit class, in numpy alone: what the enumeration (``holdem.math.rtp``)
and the optimal strategy's table (``strategy.OptimalTable``) are both indexed by. Computed on
first call (about 0.1 s), not at import."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.int64]
SUIT_PERMUTATIONS = np.array(list(itertools.permutations(range(4))), dtype=np.int64)


@cache
def flop_classes() -> tuple[Array, Array, Array, Array]:
    """``(flops, weights, row, perm)``: the 1,755 suit classes of flops (smallest member, as
    sorted card triples), how many flops each stands for, and for every flop code
    ``a * 2704 + b * 52 + c`` (a < b < c) its class row and the suit permutation taking it there.
    """
    flops = np.array(list(itertools.combinations(range(52), 3)), dtype=np.int64)
    images = np.stack([np.sort((flops & ~3) | p[flops & 3], axis=1) for p in SUIT_PERMUTATIONS])
    codes = images[..., 0] * 2704 + images[..., 1] * 52 + images[..., 2]  # (24, 22100)
    best = codes.argmin(axis=0)
    canonical = codes[best, np.arange(len(flops))]
    classes, rows, weights = np.unique(canonical, return_inverse=True, return_counts=True)
    row = np.full(52**3, -1, dtype=np.int64)
    perm = np.full(52**3, -1, dtype=np.int64)
    own = flops[:, 0] * 2704 + flops[:, 1] * 52 + flops[:, 2]
    row[own], perm[own] = rows, best
    reps = np.stack([classes // 2704, classes // 52 % 52, classes % 52], axis=1)
    return reps, weights.astype(np.int64), row, perm
