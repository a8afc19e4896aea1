"""The chip check: exact (not greedy) sums of denominations, bounded, and auto-adjust on chips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from holdem.core.chips import MAX_RESIDUES, ChipSetError, is_chip_sum, largest_chip_sum
from holdem.core.errors import BetBelowMinimumError, NotChipsError
from holdem.core.limits import TableLimits, auto_adjust

CHIP_SETS = st.lists(st.integers(1, 40), min_size=1, max_size=4, unique=True).map(tuple)


def brute_force_sums(chips: tuple[int, ...], limit: int) -> set[int]:
    """Every sum of chips up to ``limit``: one chip more on every sum found (a plain table, not
    the residue method under test)."""
    reachable = [True] + [False] * limit
    for total in range(1, limit + 1):
        reachable[total] = any(chip <= total and reachable[total - chip] for chip in chips)
    return {total for total, ok in enumerate(reachable) if ok}


@given(CHIP_SETS, st.integers(0, 150))
def test_a_sum_of_chips_is_recognised_exactly(chips: tuple[int, ...], amount: int) -> None:
    sums = brute_force_sums(chips, 150)
    assert is_chip_sum(amount, chips) == (amount in sums)
    assert largest_chip_sum(amount, chips) == max(s for s in sums if s <= amount)


def test_greedy_would_be_wrong_and_is_not_used() -> None:
    # Greedy takes 10 from 12 and is stuck at 2; 4 + 4 + 4 is the answer.
    assert is_chip_sum(12, (10, 4)) and largest_chip_sum(13, (10, 4)) == 12
    assert not is_chip_sum(6, (10, 4)) and largest_chip_sum(7, (10, 4)) == 4


def test_large_amounts_of_realistic_chips_are_checked_in_bounded_work() -> None:
    chips = (100, 500, 2_500, 10_000)
    assert is_chip_sum(10**12, chips) and not is_chip_sum(10**12 + 50, chips)
    assert largest_chip_sum(10**12 + 50, chips) == 10**12


def test_chip_sets_the_check_cannot_bound_are_refused() -> None:
    with pytest.raises(ChipSetError):
        TableLimits(1, 10**9, 0, chips=(MAX_RESIDUES + 1, MAX_RESIDUES + 2), off_chips="reject")
    with pytest.raises(ChipSetError):
        TableLimits(1, 10, 0, chips=(), off_chips="adjust")


def test_auto_adjust_on_chips_rejects_or_lowers_and_checks_the_minimum_last() -> None:
    strict = TableLimits(400, 10_000, 1_000, chips=(400, 1_000), off_chips="reject")
    lenient = TableLimits(400, 10_000, 1_000, chips=(400, 1_000), off_chips="adjust")

    with pytest.raises(NotChipsError):
        auto_adjust(1_300, 0, strict)
    assert auto_adjust(1_200, 0, strict).adjustments == ()
    # above the max: the highest amount allowed is the largest chip sum not above it
    assert (
        auto_adjust(50_000, 5_000, TableLimits(400, 9_900, 900, (400, 1_000), "reject")).ante
        == 9_800
    )
    adjusted = auto_adjust(1_300, 300, lenient)
    assert (adjusted.ante, adjusted.aa_bonus, len(adjusted.adjustments)) == (1_200, 0, 2)
    with pytest.raises(BetBelowMinimumError):
        auto_adjust(700, 0, TableLimits(500, 10_000, 0, (400, 1_000), "adjust"))  # 700 -> 400
