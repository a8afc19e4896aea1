"""The optimal decision table holdem-core ships, against the enumeration that defines it."""

from __future__ import annotations

import numpy as np
import pytest

from holdem.core.cards import parse_cards
from holdem.core.flops import flop_classes
from holdem.core.strategy import optimal, optimal_table, shipped_table_path
from holdem.math.batch import kernel_tables
from holdem.math.rtp import PAIRS, optimal_calls, optimal_totals, pay_arrays, situation_grid
from holdem.math.rtp_kernels import all_flop_totals


def valid_cells(flop: np.ndarray) -> np.ndarray:
    return ~np.isin(PAIRS, flop).any(axis=1)


def test_the_shipped_table_decides_as_the_enumeration_on_sampled_flop_classes() -> None:
    """24 flop classes (of 1,755) recomputed by the kernel: every hole pair decides alike."""
    flops = flop_classes()[0]
    rows = np.random.default_rng(16).choice(len(flops), 24, replace=False)
    pays, qualify, _ = pay_arrays()
    totals = all_flop_totals(flops[rows], kernel_tables(7), pays, qualify)
    shipped = optimal_table().calls
    for row, fresh in zip(rows.tolist(), totals, strict=True):
        valid = valid_cells(flops[row])
        assert np.array_equal(shipped[row][valid], optimal_calls(fresh)[valid]), row


def test_the_optimal_strategy_reads_the_shipped_file() -> None:
    assert shipped_table_path().is_file()
    assert optimal(parse_cards("AcAd"), parse_cards("2h7s9c")) == "call"
    assert optimal(parse_cards("2c3d"), parse_cards("AsQdJh")) == "fold"


@pytest.mark.slow
def test_the_shipped_table_is_the_full_enumerations_decisions() -> None:
    valid = situation_grid()[0]
    assert np.array_equal(optimal_table().calls[valid], optimal_calls(optimal_totals())[valid])
