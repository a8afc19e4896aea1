"""Strategy invariants: rules speak of ranks and suit patterns, never of particular suits."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from holdem.core.strategy import basic

five_cards = st.lists(st.integers(0, 51), min_size=5, max_size=5, unique=True)


@given(five_cards, st.permutations(range(4)))
def test_basic_strategy_ignores_which_suit_is_which(cards: list[int], suits: list[int]) -> None:
    relabelled = [card & ~3 | suits[card & 3] for card in cards]
    assert basic(cards[:2], cards[2:]) == basic(relabelled[:2], relabelled[2:])


@given(five_cards)
def test_basic_strategy_ignores_card_order(cards: list[int]) -> None:
    assert basic(cards[:2], cards[2:]) == basic(cards[1::-1], cards[:1:-1])
