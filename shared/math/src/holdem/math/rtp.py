"""Exact return to player by full enumeration of hole, flop, turn, river and dealer cards.

Every (hole, flop) situation is weighed by its exact result over all 1,081 turn/river pairs and
990 dealer hands; the 22,100 flops reduce to 1,755 suit classes with their orbit sizes. Results
are integers in antes; the published figures are exact ``Fraction``s of them.

The per-situation totals are kept in the holdem-math cache (``optimal_totals()``: computed by
the enumeration when missing); the optimal strategy's decisions derived from them are what
holdem-core ships (``holdem rtp --write-table PATH``, ``strategy.write_optimal_table``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from holdem.core.cards import CardError, ensure_distinct, format_cards, parse_cards
from holdem.core.evaluator import VALUE_COUNT, category, evaluate
from holdem.core.flops import flop_classes
from holdem.core.rules import STANDARD, PayTable, hand_value
from holdem.core.strategy import (
    PUBLISHED,
    STRATEGIES,
    TABLE_VERSION,
    OptimalTable,
    write_optimal_table,
)
from holdem.math.batch import evaluate_batch, kernel_tables
from holdem.math.cache import cache_dir, save_arrays
from holdem.math.rtp_kernels import all_flop_totals, hole_total

COMPLETIONS = 1081 * 990  # turn/river pairs x dealer hands for one (hole, flop)
PAIRS = np.array(list(itertools.combinations(range(52), 2)), dtype=np.int64)  # 1,326 holes
Array = npt.NDArray[np.int64]


def pay_arrays(tables: PayTable = STANDARD) -> tuple[Array, int, Array]:
    """``(ante_pays, qualify, bonus_returns)``: the ante's X-to-1 for every 7-card value, the
    dealer's lowest qualifying value, and what a called unit AA Bonus returns per 5-card value."""
    values = range(VALUE_COUNT)
    ante = np.array([tables.ante[category(v)] for v in values], dtype=np.int64)
    bonus = [tables.bonus_tier(v) for v in values]
    returns = np.array([0 if tier is None else 1 + tier.pays for tier in bonus], dtype=np.int64)
    return ante, hand_value(tables.dealer_weakest), returns


@dataclass(frozen=True)
class Enumeration:
    """Per flop class and hole pair: the summed result of calling over all completions."""

    flops: Array  # (1755, 3) class representatives
    weights: Array  # (1755,) flops per class
    totals: Array  # (1755, 1326) summed result of calling, antes, over COMPLETIONS outcomes
    valid: npt.NDArray[np.bool_]  # (1755, 1326) hole pair shares no card with the flop
    bonus: Array  # (1755, 1326) return of a called unit AA Bonus
    seconds: float = 0.0  # wall time of the enumeration itself
    compile_seconds: float = 0.0  # numba compile (or cache load) before it


def five_card_values() -> tuple[npt.NDArray[np.bool_], Array]:
    """``(valid, values)`` over (flop class, hole pair): which holes miss the flop, and the
    value of hole + flop where they do (0 elsewhere)."""
    flops = flop_classes()[0]
    valid = ~(PAIRS[None, :, :, None] == flops[:, None, None, :]).any(axis=(2, 3))
    holes = np.broadcast_to(PAIRS[None], (len(flops), 1326, 2))
    five = np.concatenate([holes, np.repeat(flops[:, None], 1326, 1)], 2)[valid]
    values = np.zeros(valid.shape, dtype=np.int64)
    values[valid] = evaluate_batch(five)
    return valid, values


def situation_grid(tables: PayTable = STANDARD) -> tuple[npt.NDArray[np.bool_], Array]:
    """``(valid, bonus)`` over (flop class, hole pair): which holes miss the flop, and what a
    called unit AA Bonus returns on those five cards."""
    valid, values = five_card_values()
    bonus = np.where(valid, pay_arrays(tables)[2][values], 0)
    return valid, bonus.astype(np.int64)


def from_totals(totals: Array, tables: PayTable = STANDARD) -> Enumeration:
    """An ``Enumeration`` around totals computed earlier (``optimal_totals()``)."""
    flops, weights, _, _ = flop_classes()
    return Enumeration(flops, weights, totals.astype(np.int64), *situation_grid(tables))


def enumerate_all(tables: PayTable = STANDARD, progress: bool = True) -> Enumeration:
    """Run the full enumeration (about 30 s on two cores) with a progress line on stderr."""
    start = time.perf_counter()
    flops, weights, _, _ = flop_classes()
    pays, qualify, _ = pay_arrays(tables)
    kernel = kernel_tables(7)
    all_flop_totals(flops[:0], kernel, pays, qualify)  # compile or load from the cache
    compiled = time.perf_counter()
    chunks = np.array_split(np.arange(len(flops)), 40)
    parts = []
    for done, chunk in enumerate(chunks, 1):
        parts.append(all_flop_totals(flops[chunk], kernel, pays, qualify))
        if progress:
            elapsed = time.perf_counter() - compiled
            line = f"\renumerating flop classes {done / len(chunks):4.0%} {elapsed:5.1f} s"
            print(line, end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    finished = time.perf_counter()
    return Enumeration(
        flops,
        weights,
        np.concatenate(parts),
        *situation_grid(tables),
        seconds=finished - compiled,
        compile_seconds=compiled - start,
    )


@dataclass(frozen=True)
class Report:
    """Exact figures of one strategy; every ratio is a ``Fraction``."""

    strategy: str
    main_rtp: Fraction  # returned / wagered, ante + call
    house_edge: Fraction  # expected loss per ante
    call_frequency: Fraction
    bonus_rtp: Fraction  # AA Bonus returned / wagered (paid only when called)

    @property
    def element_of_risk(self) -> Fraction:
        return 1 - self.main_rtp


def report(enum: Enumeration, calls: npt.NDArray[np.bool_], strategy: str) -> Report:
    """The figures of calling exactly where ``calls`` (same shape as ``enum.totals``) is true."""
    weight = enum.weights[:, None]
    called = (weight * (calls & enum.valid)).astype(np.int64)
    folded = int((weight * (~calls & enum.valid)).sum())
    situations = int((weight * enum.valid).sum())
    n_called = int(called.sum())
    called_net = int((called * enum.totals).sum())
    wagered = COMPLETIONS * (3 * n_called + folded)
    returned = 3 * COMPLETIONS * n_called + called_net
    return Report(
        strategy,
        Fraction(returned, wagered),
        Fraction(COMPLETIONS * folded - called_net, COMPLETIONS * situations),
        Fraction(n_called, situations),
        Fraction(int((called * enum.bonus).sum()), situations),
    )


def strategy_calls(enum: Enumeration, name: str) -> npt.NDArray[np.bool_]:
    """Where strategy ``name`` calls, over the enumeration's (flop class, hole pair) grid."""
    optimal = enum.totals > -COMPLETIONS  # call iff EV(call) > -1 ante, the fold result
    if name == "optimal":
        return optimal & enum.valid
    if name == "optimal-bonus":
        return (optimal | (enum.bonus > 0)) & enum.valid
    if name == "always-call":
        return enum.valid.copy()
    decide = STRATEGIES[name]
    holes = [tuple(pair) for pair in PAIRS.tolist()]
    calls = np.zeros(enum.valid.shape, dtype=np.bool_)
    for f, flop in enumerate(enum.flops.tolist()):
        row = calls[f]
        for k in np.flatnonzero(enum.valid[f]).tolist():
            row[k] = decide(holes[k], flop) == "call"
    return calls


def _pct(value: Fraction, places: int = 4) -> str:
    return f"{float(value) * 100:.{places}f}%"


def print_report(r: Report) -> None:
    main, bonus = PUBLISHED.get(r.strategy, ("-", "-"))
    print(f"strategy          {r.strategy}")
    print(f"main game RTP     {r.main_rtp} = {_pct(r.main_rtp)}   (rule sheet {main}%)")
    print(f"house edge        {r.house_edge} = {_pct(r.house_edge)} of the ante")
    print(f"element of risk   {_pct(r.element_of_risk)} of the total wager")
    print(f"call frequency    {r.call_frequency} = {_pct(r.call_frequency, 2)}")
    print(f"AA bonus RTP      {r.bonus_rtp} = {_pct(r.bonus_rtp)}   (rule sheet {bonus}%)")


def rtp_main(argv: list[str] | None = None) -> int:
    """``holdem rtp --strategy NAME``: exact RTP figures by full enumeration."""
    parser = argparse.ArgumentParser(prog="holdem rtp", description=rtp_main.__doc__)
    parser.add_argument("--strategy", choices=[*STRATEGIES, "all"], default="optimal")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument(
        "--write-table",
        type=Path,
        metavar="PATH",
        help="also write the optimal strategy's decision table there (the file holdem-core "
        "ships: holdem.core.strategy.shipped_table_path())",
    )
    args = parser.parse_args(argv)
    enum = enumerate_all(progress=not args.quiet)
    save_totals(enum.totals)  # the simulator's and the demo's exact figures
    if args.write_table is not None:
        write_optimal_table(args.write_table, optimal_calls(enum.totals))
        print(f"wrote the optimal decision table to {args.write_table}")
    names = list(STRATEGIES) if args.strategy == "all" else [args.strategy]
    for name in names:
        print_report(report(enum, strategy_calls(enum, name), name))
        print()
    situations = int((enum.weights[:, None] * enum.valid).sum())
    print(
        f"{situations:,} (hole, flop) situations x {COMPLETIONS:,} completions; "
        f"enumeration {enum.seconds:.1f} s wall, numba compile/cache load "
        f"{enum.compile_seconds:.1f} s"
    )
    return 0


def optimal_calls(totals: Array) -> npt.NDArray[np.bool_]:
    """The optimal decisions of per-situation totals: call iff EV(call) > -1 ante, the fold
    result (cells of hole pairs that share a card with the flop are never looked up)."""
    return np.asarray(totals > -COMPLETIONS)


def optimal_table(totals: Array) -> OptimalTable:
    """The optimal strategy's table from per-situation totals (what holdem-core ships)."""
    return OptimalTable(optimal_calls(totals))


def _totals_path(tables: PayTable) -> Path:
    return cache_dir() / f"optimal-v{TABLE_VERSION}-{tables.version}.npz"


def save_totals(totals: Array, tables: PayTable = STANDARD) -> None:
    """Cache the enumeration's totals (int32 is exact: |total| <= 101 x 1,070,190)."""
    save_arrays(_totals_path(tables), flops=flop_classes()[0], totals=totals.astype(np.int32))
    optimal_totals.cache_clear()


@cache
def optimal_totals(tables: PayTable = STANDARD) -> Array:
    """The enumeration's (flop class, hole pair) totals, from the cache or computed (about 30 s
    on two cores) and cached."""
    try:
        with np.load(_totals_path(tables)) as data:
            if np.array_equal(data["flops"], flop_classes()[0]):
                return np.asarray(data["totals"], dtype=np.int64)
    except (OSError, KeyError, ValueError):
        pass
    totals = enumerate_all(tables).totals
    save_totals(totals, tables)
    return totals


def hole_counts(hole: Sequence[int], flop: Sequence[int], tables: PayTable = STANDARD) -> Array:
    """(dealer not qualified, player wins, ties, dealer wins, summed result of calling) over
    every turn, river and dealer hand, counted directly for one hole and flop."""
    ensure_distinct((*hole, *flop))
    pays, qualify, _ = pay_arrays(tables)
    cards = np.array([*hole, *flop], dtype=np.int64)
    result: Array = hole_total(cards[:2], cards[2:], kernel_tables(7), pays, qualify)
    return result


def ev_main(argv: list[str] | None = None) -> int:
    """``holdem ev AsKd 2c7h9s``: exact EV of calling and folding for a hole and flop."""
    parser = argparse.ArgumentParser(prog="holdem ev", description=ev_main.__doc__)
    parser.add_argument("hole", help="the player's two cards, e.g. AsKd")
    parser.add_argument("flop", help="the three flop cards, e.g. 2c7h9s")
    args = parser.parse_args(argv)
    try:
        hole, flop = parse_cards(args.hole), parse_cards(args.flop)
        if len(hole) != 2 or len(flop) != 3:
            raise CardError(f"need 2 hole and 3 flop cards, got {len(hole)} and {len(flop)}")
        unqualified, wins, ties, losses, total = hole_counts(hole, flop).tolist()
    except CardError as exc:
        print(f"holdem ev: {exc}", file=sys.stderr)
        return 2
    call = Fraction(total, COMPLETIONS)
    decision = "call" if call > -1 else "fold"
    bonus = STANDARD.bonus_tier(evaluate((*hole, *flop)))
    print(f"hole {format_cards(hole)}, flop {format_cards(flop)}: {COMPLETIONS:,} completions")
    print(f"dealer not qualified {unqualified:,}, player wins {wins:,}, ties {ties:,}, ", end="")
    print(f"dealer wins {losses:,}")
    print(f"EV(call) = {call} = {float(call):+.6f} ante")
    print("EV(fold) = -1 ante")
    print(f"decision: {decision} (by {abs(float(call + 1)):.6f} ante)")
    bonus_text = "loses" if bonus is None else f"{bonus.name}, pays {bonus.pays} to 1 if you call"
    print(f"AA bonus: {bonus_text}")
    return 0
