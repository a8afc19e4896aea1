"""Which amounts a table's chip denominations can make, exactly (not greedily).

Greedy change-making is wrong for some denominations: with chips 4 and 10, 12 = 4 + 4 + 4 but
greedy takes 10 and is stuck at 2. Any amount is a sum of chips iff, after dividing everything by
the chips' gcd ``g``, its residue modulo the smallest (reduced) chip ``m`` is reached by a sum no
larger than it: the smallest sum of each residue is a shortest path over ``m`` residues
(Dijkstra, O(m * k log m)). ``m`` is bounded (MAX_RESIDUES) when a table is created.
"""

from __future__ import annotations

import heapq
from functools import lru_cache, reduce
from math import gcd

MAX_RESIDUES = 10_000  # smallest chip / gcd of the chips: the work and memory of one chip set


class ChipSetError(ValueError):
    """Denominations the check cannot use (none, not positive, or too many residues)."""


@lru_cache(maxsize=256)
def _smallest_sums(chips: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """(gcd, smallest reduced sum of chips with each residue mod the smallest reduced chip)."""
    if not chips or any(c <= 0 for c in chips):
        raise ChipSetError(f"chip denominations must be positive: {chips}")
    g = reduce(gcd, chips)
    reduced = sorted({c // g for c in chips})
    m = reduced[0]
    if m > MAX_RESIDUES:
        raise ChipSetError(f"smallest chip / gcd is {m}, above {MAX_RESIDUES}")
    infinity = float("inf")
    best: list[float] = [infinity] * m
    best[0] = 0
    queue = [(0, 0)]
    while queue:
        total, residue = heapq.heappop(queue)
        if total > best[residue]:
            continue
        for chip in reduced[1:]:
            nxt = total + chip
            if nxt < best[nxt % m]:
                best[nxt % m] = nxt
                heapq.heappush(queue, (nxt, nxt % m))
    return g, tuple(-1 if b == infinity else int(b) for b in best)


def check_chips(chips: tuple[int, ...]) -> None:
    """Raise ``ChipSetError`` unless the chip check can use these denominations."""
    _smallest_sums(chips)


def is_chip_sum(amount: int, chips: tuple[int, ...]) -> bool:
    """Whether ``amount`` (>= 0) is a sum of chips (0 is: no chip at all).

    >>> is_chip_sum(12, (4, 10)), is_chip_sum(13, (4, 10)), is_chip_sum(0, (5,))
    (True, False, True)
    """
    g, smallest = _smallest_sums(chips)
    if amount < 0 or amount % g:
        return False
    reduced = amount // g
    need = smallest[reduced % len(smallest)]
    return 0 <= need <= reduced


def largest_chip_sum(amount: int, chips: tuple[int, ...]) -> int:
    """The largest sum of chips not above ``amount`` (0 if no chip fits).

    >>> largest_chip_sum(13, (4, 10)), largest_chip_sum(11, (4, 10)), largest_chip_sum(3, (4,))
    (12, 10, 0)
    """
    g, smallest = _smallest_sums(chips)
    reduced = max(amount, 0) // g
    m = len(smallest)
    found = 0
    for residue, need in enumerate(smallest):
        if 0 <= need <= reduced:
            found = max(found, reduced - (reduced - residue) % m)
    return found * g
