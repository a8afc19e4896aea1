"""Exact distributions of the RNG report: checked against brute force and the known counts."""

from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
import pytest

from holdem.lab.rng import exact

FIVE_CARD = [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 36, 4]
SEVEN_CARD = [23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644, 3_473_184,
              224_848, 37_260, 4_324]  # fmt: skip


def runs_by_brute_force(n: int) -> tuple[np.ndarray, np.ndarray]:
    up, alternating = np.zeros(n + 1), np.zeros(n)
    for perm in itertools.permutations(range(n)):
        rises = [b > a for a, b in itertools.pairwise(perm)]
        up[1 + rises.count(False)] += 1
        alternating[1 + sum(a != b for a, b in itertools.pairwise(rises))] += 1
    return up / factorial(n), alternating / factorial(n)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_run_distributions_match_every_permutation(n: int) -> None:
    up, alternating = runs_by_brute_force(n)
    assert exact.ascending_runs(n) == pytest.approx(up)
    assert exact.alternating_runs(n) == pytest.approx(alternating)


def test_run_distributions_of_a_deck_sum_to_one() -> None:
    assert exact.ascending_runs().sum() == pytest.approx(1.0)
    assert exact.alternating_runs().sum() == pytest.approx(1.0)
    assert exact.ascending_runs().shape == (53,) and exact.alternating_runs().shape == (52,)


def test_five_and_seven_card_categories_are_the_known_counts() -> None:
    assert exact.five_card_categories() * comb(52, 5) == pytest.approx(FIVE_CARD)
    assert exact.seven_card_categories() * comb(52, 7) == pytest.approx(SEVEN_CARD)


def test_hole_classes_are_6_4_12_combinations_of_1326() -> None:
    grid = (exact.hole_classes() * 1326).reshape(13, 13)
    assert np.diag(grid) == pytest.approx([6] * 13)  # pairs
    assert grid[12, 11] == pytest.approx(4) and grid[11, 12] == pytest.approx(12)  # AKs, AKo


def test_flop_textures_count_all_22100_flops() -> None:
    counts = exact.flop_textures() * comb(52, 3)
    # trips: 13 ranks x 4 suit choices, always rainbow; pairs: never monotone
    assert counts[:3] == pytest.approx([0, 0, 52])
    assert counts[3] == pytest.approx(0)
    assert counts.sum() == pytest.approx(22_100)
