"""The RNG report's statistics: pooling, impossible outcomes, Holm, the second level."""

from __future__ import annotations

import pytest

from holdem.lab.rng.stats import Result, chi_square, holm, second_level


def test_a_perfect_fit_has_p_one_and_rare_cells_are_pooled() -> None:
    stat, df, p = chi_square([49, 49, 1, 1], [0.49, 0.49, 0.01, 0.01])
    assert stat == pytest.approx(0.0) and p == pytest.approx(1.0)
    assert df == 1  # the two cells expected 1 each were pooled, then grown by one to reach 5


def test_an_observed_impossible_outcome_fails_outright() -> None:
    assert chi_square([10, 1], [1.0, 0.0])[2] == 0.0


def test_a_gross_misfit_is_rejected() -> None:
    assert chi_square([900, 100], [0.5, 0.5])[2] < 1e-100


def test_holm_steps_down() -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_second_level_flags_p_values_piled_at_zero() -> None:
    piled = [Result("g", f"t{i}", 0.0, "-", 0.001 * i) for i in range(1, 50)]
    spread = [Result("g", f"t{i}", 0.0, "-", (i - 0.5) / 49) for i in range(1, 50)]
    assert second_level(piled).pvalue < 1e-10
    assert second_level(spread).pvalue > 0.5
