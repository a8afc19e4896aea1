"""Player strategies: plain ``decide(hole, flop) -> "call" | "fold"`` functions.

``optimal`` looks its decision up in the table shipped with this package
(``data/optimal-v1-<pay table>.bin``: one bit per flop class and hole pair, call iff the exact EV
of calling beats the folded ante). ``holdem rtp --write-table`` (holdem-math) writes it from the
full enumeration and the tests check it against the enumeration; ``optimal_table()`` reads it on
first use (the dealer calls it at start). Importing this module reads nothing. The other
strategies are rules.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from holdem.core.cards import HandCategory
from holdem.core.evaluator import category, evaluate
from holdem.core.flops import SUIT_PERMUTATIONS, flop_classes
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
    """The optimal decision for every (flop class, hole pair): call iff the exact EV of calling
    beats the folded ante, as the full enumeration (holdem-math's ``rtp``) found it."""

    def __init__(self, calls: npt.NDArray[np.bool_]) -> None:
        _, _, row, perm = flop_classes()
        if calls.shape != (CLASS_FLOPS, 1326):
            raise ValueError(f"an optimal table is (1755, 1326), not {calls.shape}")
        self.calls = calls
        # One bit per cell (290 kB), read as Python ints: no per-process copy of a big array.
        self._bits = np.packbits(calls.ravel()).tobytes()
        self._width = calls.shape[1]
        self._row = row.astype(np.int32)
        self._perm = perm.astype(np.int8)
        self._suits: list[list[int]] = SUIT_PERMUTATIONS.tolist()

    def cell(self, hole: Sequence[int], flop: Sequence[int]) -> tuple[int, int]:
        """``(flop class row, hole pair index)`` of a hole and flop, after the suit permutation
        that takes the flop to its class's representative."""
        a, b, c = sorted(flop)
        code = a * 2704 + b * 52 + c
        suits = self._suits[self._perm.item(code)]
        x, y = sorted(card & ~3 | suits[card & 3] for card in hole)
        return self._row.item(code), x * (103 - x) // 2 + y - x - 1

    def decide(self, hole: Sequence[int], flop: Sequence[int]) -> Decision:
        """Call iff calling loses less than the folded ante."""
        row, pair = self.cell(hole, flop)
        index = row * self._width + pair
        return "call" if self._bits[index >> 3] >> (7 - (index & 7)) & 1 else "fold"


CLASS_FLOPS: Final = 1755  # suit classes of the 22,100 flops (flops.flop_classes)


def shipped_table_path(tables: PayTable = STANDARD) -> Path:
    """The optimal table shipped with holdem-core for a pay table (``holdem rtp --write-table``
    writes it; ``make core-data`` regenerates it)."""
    return Path(__file__).parent / "data" / f"optimal-v{TABLE_VERSION}-{tables.version}.bin"


# A table file: this line, then zlib of the class flops (1755 x 3 int8, the rows' order) and
# one bit per cell (numpy.packbits order). Byte for byte the same for the same decisions.
TABLE_MAGIC: Final = b"holdem optimal decisions v1\n"


def write_optimal_table(path: Path, calls: npt.NDArray[np.bool_]) -> None:
    """Write a table file: the class flops it is indexed by, and one bit per cell."""
    table = OptimalTable(calls)  # checks the shape
    payload = flop_classes()[0].astype(np.int8).tobytes() + table._bits
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(TABLE_MAGIC + zlib.compress(payload, 9))


def read_optimal_table(path: Path) -> OptimalTable:
    """A table file from ``write_optimal_table``; ``ValueError`` unless it is one, indexed by
    this code's flop classes."""
    data = path.read_bytes()
    if not data.startswith(TABLE_MAGIC):
        raise ValueError(f"{path}: not an optimal table file")
    payload = zlib.decompress(data[len(TABLE_MAGIC) :])
    flops, packed = payload[: CLASS_FLOPS * 3], payload[CLASS_FLOPS * 3 :]
    expected = flop_classes()[0].astype(np.int8).tobytes()
    if flops != expected or len(packed) != (CLASS_FLOPS * 1326 + 7) // 8:
        raise ValueError(f"{path}: not indexed by these flop classes")
    bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=CLASS_FLOPS * 1326)
    return OptimalTable(bits.astype(np.bool_).reshape(CLASS_FLOPS, 1326))


@cache
def optimal_table(tables: PayTable = STANDARD) -> OptimalTable:
    """The shipped table of a pay table, read on first use (the dealer calls this at start).
    Nothing is computed here: a pay table without a shipped table is a ``FileNotFoundError``."""
    path = shipped_table_path(tables)
    if not path.is_file():
        raise FileNotFoundError(
            f"no optimal table for pay table {tables.version!r} at {path}: "
            "`holdem rtp --write-table PATH` (holdem-math) writes one"
        )
    return read_optimal_table(path)


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

PUBLISHED: Final = {  # the rule sheet's RTP table: (main game, AA Bonus), percent
    "optimal": ("99.18", "90.9"),
    "basic": ("98.7", "89.6"),
    "basic-bonus": ("98.7", "93.60"),
    "optimal-bonus": ("-", "93.60"),
    "always-call": ("-", "93.60"),
}
