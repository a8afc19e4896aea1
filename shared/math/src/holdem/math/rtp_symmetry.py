"""Suit symmetry of the enumeration: permutations of the four suits change no result."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from holdem.core.flops import SUIT_PERMUTATIONS


@njit(cache=True, inline="always")
def relabel(card: int, perm: npt.NDArray[np.int64]) -> int:
    return int((card & ~3) | perm[card & 3])


@njit(cache=True)
def flop_symmetries(flop: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The suit permutations that map the flop onto itself (always the identity at least)."""
    keep = np.zeros(len(SUIT_PERMUTATIONS), dtype=np.bool_)
    for p in range(len(SUIT_PERMUTATIONS)):
        fixed = True
        for card in flop:
            image = relabel(card, SUIT_PERMUTATIONS[p])
            if image != flop[0] and image != flop[1] and image != flop[2]:
                fixed = False
        keep[p] = fixed
    return SUIT_PERMUTATIONS[keep]


@njit(cache=True)
def orbit_size(t: int, r: int, group: npt.NDArray[np.int64]) -> int:
    """How many turn/river pairs the flop's symmetries map (t, r) to; 0 unless (t, r) is the
    smallest of them, so each orbit is enumerated once, weighted by its size."""
    seen = np.empty(len(group), dtype=np.int64)
    size = 0
    for g in range(len(group)):
        a, b = relabel(t, group[g]), relabel(r, group[g])
        a, b = min(a, b), max(a, b)
        if a * 52 + b < t * 52 + r:
            return 0
        code = a * 52 + b
        new = True
        for k in range(size):
            if seen[k] == code:
                new = False
        if new:
            seen[size] = code
            size += 1
    return size
