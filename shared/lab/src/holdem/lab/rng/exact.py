"""Exact probabilities under a fair shuffle, counted by enumeration with the core's own code."""

from __future__ import annotations

import itertools
from functools import cache
from math import comb, factorial

import numpy as np
import numpy.typing as npt
from numba import njit

from holdem.core.evaluator_tables import shipped_tables
from holdem.lab.rng.sampling import flop_texture, hole_class
from holdem.math.batch import kernel_tables
from holdem.math.kernels import KernelTables, eval7, eval_cards

Probs = npt.NDArray[np.float64]


def all_hands(size: int) -> npt.NDArray[np.int64]:
    """Every ``size``-card set of the 52 as rows of card codes."""
    flat = itertools.chain.from_iterable(itertools.combinations(range(52), size))
    return np.fromiter(flat, dtype=np.int64, count=comb(52, size) * size).reshape(-1, size)


@cache
def hole_classes() -> Probs:
    """Probability of each of the 169 two-card classes (``sampling.hole_class`` grid)."""
    hands = all_hands(2)
    return np.bincount(hole_class(hands[:, 0], hands[:, 1]), minlength=169) / len(hands)


@cache
def flop_textures() -> Probs:
    """Probability of each flop texture (``sampling.flop_texture``) over all 22,100 flops."""
    hands = all_hands(3)
    return np.bincount(flop_texture(hands), minlength=9) / len(hands)


@njit(cache=True)
def _five_card_counts(
    tables: KernelTables, category: npt.NDArray[np.int8]
) -> npt.NDArray[np.int64]:
    out = np.zeros(10, dtype=np.int64)
    hand = np.zeros(5, dtype=np.uint8)
    for a in range(48):
        for b in range(a + 1, 49):
            for c in range(b + 1, 50):
                for d in range(c + 1, 51):
                    for e in range(d + 1, 52):
                        hand[0], hand[1], hand[2], hand[3], hand[4] = a, b, c, d, e
                        out[category[eval_cards(hand, tables)]] += 1
    return out


@cache
def five_card_categories() -> Probs:
    """Category probabilities of five random cards: all 2,598,960 hands by the core evaluator."""
    counts = _five_card_counts(kernel_tables(5), shipped_tables().category)
    return np.asarray(counts / counts.sum(), dtype=np.float64)


@njit(cache=True)
def _seven_card_counts(
    tables: KernelTables, category: npt.NDArray[np.int8]
) -> npt.NDArray[np.int64]:
    out = np.zeros(10, dtype=np.int64)
    for a in range(46):
        for b in range(a + 1, 47):
            for c in range(b + 1, 48):
                for d in range(c + 1, 49):
                    for e in range(d + 1, 50):
                        for f in range(e + 1, 51):
                            for g in range(f + 1, 52):
                                out[category[eval7(a, b, c, d, e, f, g, tables)]] += 1
    return out


@cache
def seven_card_categories() -> Probs:
    """Category probabilities of seven random cards: all 133,784,560 hands, core evaluator."""
    counts = _seven_card_counts(kernel_tables(7), shipped_tables().category)
    return np.asarray(counts / counts.sum(), dtype=np.float64)


def uniform(cells: int) -> Probs:
    return np.full(cells, 1.0 / cells)


def prefix_orders(k: int) -> Probs:
    """Each of the ``k!`` relative orders of the first ``k`` cards is equally likely."""
    return uniform(factorial(k))


@cache
def ascending_runs(n: int = 52) -> Probs:
    """P(a uniform permutation of ``n`` has r ascending runs), index r (Eulerian numbers)."""
    row = [1]  # Eulerian numbers A(m, d) by descents d, for m = 1
    for m in range(2, n + 1):
        row = [
            (d + 1) * (row[d] if d < len(row) else 0) + (m - d) * (row[d - 1] if d else 0)
            for d in range(m)
        ]
    total = factorial(n)
    return np.array([0.0] + [a / total for a in row])


@cache
def alternating_runs(n: int = 52) -> Probs:
    """P(a uniform permutation of ``n`` has r runs up and down), index r (André's recurrence)."""
    row = {1: 2}  # R(2, 1) = 2: both orders of two values are one run
    for m in range(3, n + 1):
        row = {
            k: k * row.get(k, 0) + 2 * row.get(k - 1, 0) + (m - k) * row.get(k - 2, 0)
            for k in range(1, m)
        }
    total = factorial(n)
    return np.array([0.0] + [row.get(k, 0) / total for k in range(1, n)])
