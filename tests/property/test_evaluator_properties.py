"""Hand evaluator invariants over random hands (Hypothesis)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from holdem.core.evaluator import evaluate
from holdem.math.batch import evaluate_batch

seven_cards = st.lists(st.integers(0, 51), min_size=7, max_size=7, unique=True)
suit_maps = st.permutations(range(4))


@given(seven_cards, suit_maps)
def test_relabelling_the_suits_never_changes_a_value(cards: list[int], suits: list[int]) -> None:
    relabelled = [card & ~3 | suits[card & 3] for card in cards]
    for size in (5, 6, 7):
        assert evaluate(relabelled[:size]) == evaluate(cards[:size])


@given(seven_cards)
def test_adding_a_card_never_lowers_the_best_five(cards: list[int]) -> None:
    assert evaluate(cards[:5]) <= evaluate(cards[:6]) <= evaluate(cards)


@given(seven_cards)
def test_seven_cards_are_worth_their_best_five(cards: list[int]) -> None:
    assert evaluate(cards) == max(evaluate(five) for five in itertools.combinations(cards, 5))


@settings(deadline=None)  # the first call loads the numba kernel
@given(st.lists(seven_cards, min_size=1, max_size=50))
def test_batch_and_single_hand_agree(hands: list[list[int]]) -> None:
    assert evaluate_batch(np.array(hands)).tolist() == [evaluate(hand) for hand in hands]


@given(seven_cards)
def test_card_order_never_matters(cards: list[int]) -> None:
    assert evaluate(cards) == evaluate(sorted(cards)) == evaluate(cards[::-1])
