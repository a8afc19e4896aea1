"""Strategies: the basic rule sheet, the bonus override, and the optimal table's lookup."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from holdem.core.cards import parse_cards
from holdem.core.flops import flop_classes
from holdem.core.strategy import (
    STRATEGIES,
    OptimalTable,
    _straight_draw,
    always_call,
    basic,
    read_optimal_table,
    with_bonus,
    write_optimal_table,
)
from holdem.math.batch import kernel_tables
from holdem.math.rtp import COMPLETIONS, PAIRS, hole_counts, optimal_table, pay_arrays
from holdem.math.rtp_kernels import all_flop_totals


def decide(strategy: object, hole: str, flop: str) -> str:
    assert callable(strategy)
    result: str = strategy(parse_cards(hole), parse_cards(flop))
    return result


@pytest.mark.parametrize(
    ("hole", "flop", "expected"),
    [
        ("7c2d", "7h9sKd", "call"),  # a pair with a hole card
        ("3c3d", "7h9sKd", "call"),  # a pocket pair
        ("4c2d", "9h9sKd", "fold"),  # only the flop's own pair, nothing else
        ("Jc2d", "9h9sKd", "call"),  # ... unless you hold a ten or higher
        ("4c2d", "9h9s9d", "call"),  # trips on the flop count as "better than a pair"
        ("Tc2d", "5h9s8d", "call"),  # a ten or higher
        ("6c5d", "4h8sKd", "call"),  # four to a straight, inside
        ("6c5c", "Ac8cKd", "call"),  # four to a flush
        ("3c2d", "Ah4s9d", "call"),  # the wheel draw: ace plays low
        ("6c5d", "Jh8sKd", "fold"),
        ("9c7d", "2h3s4d", "fold"),
    ],
)
def test_basic_rule_sheet(hole: str, flop: str, expected: str) -> None:
    assert decide(basic, hole, flop) == expected


def test_straight_draws_count_the_ace_high_and_low() -> None:
    assert _straight_draw([12, 0, 1, 2, 7])  # A-2-3-4
    assert _straight_draw([12, 11, 10, 9, 0])  # A-K-Q-J
    assert not _straight_draw([11, 0, 1, 2, 7])  # K-2-3-4 does not wrap
    assert not _straight_draw([0, 1, 6, 7, 11])


def test_the_bonus_override_calls_a_won_bonus_that_basic_would_fold() -> None:
    assert decide(basic, "2c3d", "AhAs9c") == "fold"
    assert decide(with_bonus(basic), "2c3d", "AhAs9c") == "call"
    assert decide(always_call, "2c3d", "AhAs9c") == "call"


def test_the_cli_names_every_strategy() -> None:
    assert set(STRATEGIES) == {"optimal", "optimal-bonus", "always-call", "basic", "basic-bonus"}


def test_optimal_table_finds_the_class_of_any_flop_and_maps_the_hole_with_it() -> None:
    """A table filled for three flop classes answers for every suit relabelling of them."""
    flops, _, row, _ = flop_classes()
    pays, qualify, _ = pay_arrays()
    chosen = [parse_cards(f) for f in ("Th7h2c", "QdQs5c", "9c8c7c")]
    totals = np.zeros((len(flops), 1326), dtype=np.int64)
    for flop in chosen:
        code = sorted(flop)
        r = row[code[0] * 2704 + code[1] * 52 + code[2]]
        totals[r] = all_flop_totals(flops[r : r + 1], kernel_tables(7), pays, qualify)[0]
    table = optimal_table(totals)
    pairs = PAIRS.tolist()
    rng = np.random.default_rng(3)
    for flop in chosen:
        holes = [p for p in pairs if not set(p) & set(flop)]
        for k in rng.choice(len(holes), 4, replace=False):
            total = int(hole_counts(holes[k], flop)[4])
            r, pair = table.cell(holes[k], flop)
            assert totals[r, pair] == total
            assert table.decide(holes[k], flop) == ("call" if total > -COMPLETIONS else "fold")


def test_a_table_file_reads_back_the_decisions_it_was_written_with(tmp_path: Path) -> None:
    calls = np.random.default_rng(5).random((1755, 1326)) < 0.8
    write_optimal_table(tmp_path / "t.bin", calls)
    assert np.array_equal(read_optimal_table(tmp_path / "t.bin").calls, calls)
    (tmp_path / "u.bin").write_bytes(b"something else")
    with pytest.raises(ValueError, match="not an optimal table"):
        read_optimal_table(tmp_path / "u.bin")
    with pytest.raises(ValueError, match="1755, 1326"):
        OptimalTable(calls[:3])
