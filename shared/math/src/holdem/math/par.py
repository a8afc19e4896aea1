"""The PAR sheet: every outcome of a round by full enumeration, with exact probabilities.

One counting enumeration per pay table (``par_kernels``) counts, for every (flop class, hole
pair) situation, the 1,081 x 990 completions of a call by the player's final hand category and
the dealer's answer (not qualified, player wins, push, dealer wins). Each strategy then calls
where it calls and folds elsewhere, and each situation's AA Bonus class follows from hole and
flop; a strategy's tally is the joint count of (AA Bonus class, main outcome) over all
25,989,600 x 1,070,190 deals. Everything is integers; every ratio is an exact ``Fraction``.

The enumeration checks itself against the RTP kernel: every situation's counts, priced by the
pay table, must give the kernel's total (``ParMismatch`` otherwise), and ``holdem.math.certify``
checks each strategy's PAR RTPs against the RTP sheet's exact fractions. The tallies are cached
beside the RTP kernel's totals (``$HOLDEM_CACHE_DIR``).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.typing as npt

from holdem.core.cards import HandCategory
from holdem.core.evaluator import VALUE_COUNT, category
from holdem.core.rules import PayTable
from holdem.core.strategy import STRATEGIES
from holdem.math.batch import kernel_tables
from holdem.math.cache import cache_dir, save_arrays
from holdem.math.par_kernels import (
    CATEGORIES,
    LOSS,
    OUTCOMES,
    PUSH,
    UNQUALIFIED,
    WIN,
    all_flop_counts,
)
from holdem.math.rtp import (
    COMPLETIONS,
    PAIRS,
    Array,
    five_card_values,
    from_totals,
    optimal_totals,
    pay_arrays,
    strategy_calls,
)

FORMAT = 1  # of the cached tallies: bump when their layout changes
CALLED = CATEGORIES * OUTCOMES  # main-game columns after the fold column


class ParMismatch(RuntimeError):
    """The counting enumeration disagrees with the RTP kernel: neither can be certified."""


@dataclass(frozen=True)
class Line:
    """One outcome of the main game or the AA Bonus: its net result per ante and its count."""

    outcome: str
    net: int  # antes won (negative: lost) on this game's stake
    stake: int  # antes wagered on this game
    combinations: int


@dataclass(frozen=True)
class Par:
    """One strategy's PAR figures under one pay table."""

    pay_table: str
    strategy: str
    main: tuple[Line, ...]
    bonus: tuple[Line, ...]
    combined: dict[int, int]  # net of ante + call + a one-ante AA Bonus -> combinations

    @property
    def total(self) -> int:
        return sum(line.combinations for line in self.main)


def category_name(cat: int) -> str:
    return HandCategory(cat).name.replace("_", " ").lower()


def main_prices(table: PayTable) -> Array:
    """Net result in antes of a called hand, by (category, outcome)."""
    out = np.zeros((CATEGORIES, OUTCOMES), dtype=np.int64)
    call_win = table.call_pays * table.call_multiple
    for cat in HandCategory:
        out[cat, UNQUALIFIED] = table.ante[cat]
        out[cat, WIN] = table.ante[cat] + call_win
        out[cat, PUSH] = 0
        out[cat, LOSS] = -(1 + table.call_multiple)
    return out


def bonus_classes(table: PayTable) -> Array:
    """A called AA Bonus's class by five-card value: its tier's index, or ``len(bonus)`` when
    it loses. The class after ``len(bonus)`` is the bonus forfeited by a fold."""
    tiers = [table.bonus_tier(v) for v in range(VALUE_COUNT)]
    return np.array(
        [len(table.bonus) if t is None else table.bonus.index(t) for t in tiers], dtype=np.int64
    )


def count(
    table: PayTable,
    names: Sequence[str] = tuple(STRATEGIES),
    rows: npt.NDArray[np.int64] | None = None,
    progress: bool = False,
    totals: Array | None = None,
) -> dict[str, Array]:
    """Each strategy's tally ``(len(bonus) + 2, 1 + CALLED)``: deals by (AA Bonus class, main
    outcome), column 0 the fold. ``rows``: only those flop classes (tests); ``totals``: the RTP
    kernel's totals to check against (default: ``optimal_totals(table)``)."""
    totals = optimal_totals(table) if totals is None else totals
    enum = from_totals(totals, table)
    calls = {name: strategy_calls(enum, name) for name in names}
    valid, values = five_card_values()
    classes = len(table.bonus) + 2
    onehot = (bonus_classes(table)[values][..., None] == np.arange(classes)).astype(np.int64)
    cats = np.array([int(category(v)) for v in range(VALUE_COUNT)], dtype=np.int64)
    prices = main_prices(table)
    tallies = {name: np.zeros((classes, 1 + CALLED), dtype=np.int64) for name in names}
    flops = enum.flops
    rows = np.arange(len(flops)) if rows is None else rows
    chunks = np.array_split(rows, max(1, min(40, len(rows))))
    for done, chunk in enumerate(chunks, 1):
        counts = all_flop_counts(flops[chunk], kernel_tables(7), cats, pay_arrays(table)[1])
        _check(counts, prices, totals[chunk], valid[chunk], chunk)
        weighted = counts.reshape(len(chunk), 1326, CALLED) * enum.weights[chunk, None, None]
        for name in names:
            mask = calls[name][chunk] & valid[chunk]
            called = onehot[chunk] * mask[..., None]
            tallies[name][:, 1:] += np.einsum("nkb,nkc->bc", called, weighted)
            folded = int((enum.weights[chunk, None] * (~mask & valid[chunk])).sum())
            tallies[name][classes - 1, 0] += COMPLETIONS * folded
        if progress:
            print(f"\rcounting flop classes {done / len(chunks):4.0%}", end="", file=sys.stderr)
    if progress:
        print(file=sys.stderr)
    return tallies


def _check(counts: Array, prices: Array, totals: Array, valid: npt.NDArray[np.bool_],
           rows: Array) -> None:  # fmt: skip
    """Every situation's completions add up, and priced they are the RTP kernel's total."""
    per_cell = counts.sum(axis=(2, 3))
    priced = (counts * prices).sum(axis=(2, 3))
    bad = valid & ((priced != totals) | (per_cell != COMPLETIONS))
    if bad.any():
        f, k = (int(i[0]) for i in np.nonzero(bad))
        raise ParMismatch(
            f"flop class {int(rows[f])}, hole pair {PAIRS[k].tolist()}: the counts price to "
            f"{int(priced[f, k])} over {int(per_cell[f, k])} deals, the RTP kernel's total is "
            f"{int(totals[f, k])} over {COMPLETIONS} ({int(bad.sum())} situations differ)"
        )


def _tally_path(table: PayTable) -> Path:
    return cache_dir() / f"par-v{FORMAT}-{table.version}.npz"


def tallies(table: PayTable, names: Iterable[str] = STRATEGIES,
            progress: bool = False) -> dict[str, Array]:  # fmt: skip
    """The strategies' tallies, from the cache or counted (and cached)."""
    wanted = list(names)
    try:
        with np.load(_tally_path(table)) as data:
            if all(name in data for name in wanted):
                return {name: np.asarray(data[name], dtype=np.int64) for name in wanted}
    except (OSError, KeyError, ValueError):
        pass
    counted = count(table, wanted, progress=progress)
    save_arrays(_tally_path(table), **counted)
    return counted


def par(table: PayTable, name: str, tally: Array) -> Par:
    """The PAR figures of one strategy's tally."""
    prices = main_prices(table).ravel()
    main: dict[tuple[str, int, int], int] = {("fold", -1, 1): int(tally[:, 0].sum())}
    by_outcome = tally[:, 1:].sum(axis=0).reshape(CATEGORIES, OUTCOMES)
    for cat in reversed(range(CATEGORIES)):
        pays = int(table.ante[HandCategory(cat)])
        line = f"dealer does not qualify, ante pays {pays} to 1"
        key = (line, pays, 1 + table.call_multiple)
        main[key] = main.get(key, 0) + int(by_outcome[cat, UNQUALIFIED])
    for outcome, label in ((WIN, "win"), (PUSH, "push"), (LOSS, "loss")):
        for cat in reversed(range(CATEGORIES)):
            net = int(prices[cat * OUTCOMES + outcome])
            key = (f"{label}, {category_name(cat)}", net, 1 + table.call_multiple)
            main[key] = int(by_outcome[cat, outcome])
    per_class = tally.sum(axis=1)
    bonus: list[tuple[str, int, int]] = [
        (str(tier.name), tier.pays, int(per_class[i])) for i, tier in enumerate(table.bonus)
    ]
    bonus += [("no bonus hand", -1, int(per_class[-2])), ("forfeited by a fold", -1,
              int(per_class[-1]))]  # fmt: skip
    nets = np.concatenate([[-1], prices])
    bonus_nets = [tier.pays for tier in table.bonus] + [-1, -1]
    combined: dict[int, int] = {}
    for b, bonus_net in enumerate(bonus_nets):
        for c in np.flatnonzero(tally[b]).tolist():
            net = int(nets[c]) + bonus_net
            combined[net] = combined.get(net, 0) + int(tally[b, c])
    return Par(
        table.version,
        name,
        tuple(Line(o, net, stake, n) for (o, net, stake), n in main.items() if n),
        tuple(Line(o, net, 1, n) for o, net, n in bonus if n),
        dict(sorted(combined.items())),
    )


@dataclass(frozen=True)
class Figures:
    """What the sheet prints of one net-result distribution (per ante)."""

    rtp: Fraction | None  # returned / wagered (None for the combined game)
    mean: Fraction
    variance: Fraction
    hit_frequency: Fraction  # P(net > 0)
    max_win: int
    max_win_combinations: int
    total: int

    @property
    def standard_deviation(self) -> float:
        return math.sqrt(self.variance)


def figures(dist: dict[int, int], lines: Sequence[Line] | None = None) -> Figures:
    total = sum(dist.values())
    mean = Fraction(sum(net * n for net, n in dist.items()), total)
    square = Fraction(sum(net * net * n for net, n in dist.items()), total)
    rtp = None
    if lines is not None:
        wagered = sum(line.stake * line.combinations for line in lines)
        rtp = Fraction(wagered + sum(line.net * line.combinations for line in lines), wagered)
    top = max(dist)
    return Figures(
        rtp,
        mean,
        square - mean * mean,
        Fraction(sum(n for net, n in dist.items() if net > 0), total),
        top,
        dist[top],
        total,
    )


def distribution(lines: Sequence[Line]) -> dict[int, int]:
    out: dict[int, int] = {}
    for line in lines:
        out[line.net] = out.get(line.net, 0) + line.combinations
    return dict(sorted(out.items()))


def sheet_figures(p: Par) -> dict[str, Figures]:
    """The main game, the AA Bonus and the two combined (an AA Bonus of one ante every round)."""
    return {
        "main": figures(distribution(p.main), p.main),
        "aa_bonus": figures(distribution(p.bonus), p.bonus),
        "combined": figures(p.combined),
    }
