"""Player strategies: plain ``decide(hole, flop) -> "call" | "fold"`` functions.

``optimal`` looks the exact EV of calling up in a table made by the full enumeration (cached in
the user cache directory, rebuilt by ``holdem rtp`` code when missing); the others are rules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from holdem.core.cards import HandCategory
from holdem.core.evaluator import category, evaluate
from holdem.core.rules import STANDARD, Decision, PayTable, bonus_return

Decide = Callable[[Sequence[int], Sequence[int]], Decision]
TEN: Final = 8  # rank index of the ten (2 = 0 ... A = 12)
TABLE_VERSION: Final = 1


def always_call(hole: Sequence[int], flop: Sequence[int]) -> Decision:
    """Complete every round."""
    return "call"


def _straight_draw(ranks: Sequence[int]) -> bool:
    """Four of five consecutive ranks (ace high or low) among ``ranks``."""
    mask = 0
    for rank in ranks:
        mask |= 2 << rank  # bit 1 = deuce ... bit 13 = ace
    mask |= mask >> 13  # the ace also plays low, bit 0
    return any((mask >> low & 0b11111).bit_count() >= 4 for low in range(10))


def basic(hole: Sequence[int], flop: Sequence[int]) -> Decision:
    """The basic rule sheet, for people. Call when any of these holds, else fold:

    1. You have a pair or better, except when the only pair is the flop's own.
    2. You hold a ten or higher.
    3. You have four to a flush, or four to a straight (open-ended or inside).

    >>> from holdem.core.cards import parse_cards as p
    >>> basic(p("7c2d"), p("7h9sKd")), basic(p("4c2d"), p("9h9sKd")), basic(p("Tc2d"), p("5h9s8d"))
    ('call', 'fold', 'call')
    >>> basic(p("6c5d"), p("4h8sKd")), basic(p("6c5c"), p("Ac8cKd")), basic(p("6c5d"), p("Jh8sKd"))
    ('call', 'call', 'fold')
    """
    hole_ranks = (hole[0] >> 2, hole[1] >> 2)
    flop_ranks = [card >> 2 for card in flop]
    if hole_ranks[0] == hole_ranks[1] or any(rank in flop_ranks for rank in hole_ranks):
        return "call"  # a pair that uses a hole card (or better)
    if category(evaluate((*hole, *flop))) >= HandCategory.TWO_PAIR or max(hole_ranks) >= TEN:
        return "call"
    suits = [card & 3 for card in (*hole, *flop)]
    if max(suits.count(suit) for suit in range(4)) >= 4:
        return "call"
    return "call" if _straight_draw((*hole_ranks, *flop_ranks)) else "fold"


class OptimalTable:
    """The exact summed result of calling for every (flop class, hole pair), from ``rtp``."""

    def __init__(self, totals: npt.NDArray[np.int64], completions: int) -> None:
        from holdem.core.flops import SUIT_PERMUTATIONS, flop_classes

        _, _, row, perm = flop_classes()
        self.totals = totals
        # Flat numpy, read with .item(): as Python lists the 2.3M totals cost 160 MB of every
        # process that loads the table (the dealer does at start), for a few percent of speed.
        self._totals = np.ascontiguousarray(totals).ravel()
        self._width = totals.shape[1]
        self._row = row.astype(np.int32)
        self._perm = perm.astype(np.int8)
        self._suits: list[list[int]] = SUIT_PERMUTATIONS.tolist()
        self.completions = completions

    def total(self, hole: Sequence[int], flop: Sequence[int]) -> int:
        """Summed result of calling, in antes, over every turn, river and dealer hand."""
        a, b, c = sorted(flop)
        code = a * 2704 + b * 52 + c
        suits = self._suits[self._perm.item(code)]
        x, y = sorted(card & ~3 | suits[card & 3] for card in hole)
        pair = x * (103 - x) // 2 + y - x - 1
        return int(self._totals.item(self._row.item(code) * self._width + pair))

    def ev(self, hole: Sequence[int], flop: Sequence[int]) -> Fraction:
        """Exact expected result of calling, in antes (folding is -1)."""
        return Fraction(self.total(hole, flop), self.completions)

    def decide(self, hole: Sequence[int], flop: Sequence[int]) -> Decision:
        """Call iff calling loses less than the folded ante."""
        return "call" if self.total(hole, flop) > -self.completions else "fold"


def _table_path(tables: PayTable) -> Path:
    from holdem.core.evaluator_tables import cache_dir

    return cache_dir() / f"optimal-v{TABLE_VERSION}-{tables.version}.npz"


def save_optimal_table(totals: npt.NDArray[np.int64], tables: PayTable = STANDARD) -> None:
    """Cache the enumeration's totals (int32 is exact: |total| <= 101 x 1,070,190)."""
    from holdem.core.evaluator_tables import save_arrays
    from holdem.core.flops import flop_classes

    save_arrays(_table_path(tables), flops=flop_classes()[0], totals=totals.astype(np.int32))
    optimal_table.cache_clear()


@cache
def optimal_table(tables: PayTable = STANDARD) -> OptimalTable:
    """The table, read from the user cache or computed by the full enumeration and cached."""
    from holdem.core.flops import flop_classes
    from holdem.core.rtp import COMPLETIONS

    try:
        with np.load(_table_path(tables)) as data:
            if np.array_equal(data["flops"], flop_classes()[0]):
                return OptimalTable(data["totals"], COMPLETIONS)
    except (OSError, KeyError, ValueError):
        pass
    from holdem.core.rtp import enumerate_all

    totals = enumerate_all(tables).totals
    save_optimal_table(totals, tables)
    return OptimalTable(totals, COMPLETIONS)


def optimal(hole: Sequence[int], flop: Sequence[int]) -> Decision:
    """Call iff the exact EV of calling beats folding (-1 ante)."""
    return optimal_table().decide(hole, flop)


def with_bonus(decide: Decide) -> Decide:
    """``decide``, but always call when the AA Bonus has already won (it is paid only then)."""

    def decide_with_bonus(hole: Sequence[int], flop: Sequence[int]) -> Decision:
        if bonus_return(evaluate((*hole, *flop)), 1) > 0:
            return "call"
        return decide(hole, flop)

    decide_with_bonus.__doc__ = f"{decide.__name__}, calling every AA Bonus win."
    return decide_with_bonus


STRATEGIES: Final[dict[str, Decide]] = {
    "optimal": optimal,
    "optimal-bonus": with_bonus(optimal),
    "always-call": always_call,
    "basic": basic,
    "basic-bonus": with_bonus(basic),
}
