"""What the replay's folds now look up instead of recomputing per record (issue 28 item 5) gives
what the computation gave: the branch ``isinstance`` would choose (ByClass), the cards
``Card.parse`` reads (parse_cards), the AA Bonus row the boundary hands give (bonus_tier)."""

from __future__ import annotations

from itertools import combinations

import pytest

from holdem.core.cards import FULL_DECK, Card, CardError, parse_cards
from holdem.core.contracts import BetPlaced, Called, Dealt, Folded, Message, Settled
from holdem.core.decider import ByClass
from holdem.core.evaluator import evaluate
from holdem.core.rules import STANDARD, hand_value


class Base:
    pass


class Child(Base):
    pass


class Other:
    pass


def test_the_first_route_an_instance_matches_wins_and_anything_else_takes_the_default() -> None:
    route = ByClass([(Child, "child"), (Base, "base"), (int | str, "scalar")], "other")
    assert [route(Child()), route(Base()), route(3), route("x"), route(Other())] == [
        "child",
        "base",
        "scalar",
        "scalar",
        "other",
    ]


def test_a_subclass_met_after_its_base_is_routed_by_its_own_class() -> None:
    route = ByClass([(Child, "child"), (Base, "base")], "other")
    assert route(Base()) == "base"
    assert route(Child()) == "child"  # not the base's answer, remembered for another class
    assert route(Base()) == "base"


def test_the_message_classes_are_routed_as_isinstance_routes_them() -> None:
    routes = [(Dealt | Called | Folded, "reveal"), (BetPlaced, "bet"), (Message, "message")]
    route = ByClass(routes, "none")
    for model in (Dealt, Called, Folded, BetPlaced, Settled):
        instance = model.model_construct()
        first = next(value for kind, value in routes if isinstance(instance, kind))
        assert route(instance) == route(instance) == first
    assert route(object()) == "none"


def test_a_deck_s_text_reads_as_card_parse_reads_each_card() -> None:
    texts = [str(card) for card in reversed(FULL_DECK)]
    assert parse_cards(texts) == tuple(Card.parse(text) for text in texts)
    mixed = ["as", "KD", *texts[2:]]  # other spellings Card.parse reads
    assert parse_cards(mixed) == tuple(Card.parse(text) for text in mixed)
    assert parse_cards(iter(texts)) == parse_cards(texts)  # any iterable, read once


@pytest.mark.parametrize("bad", [["As", "Zz"], ["As", "A"], ["As", ""]])
def test_a_deck_with_text_that_is_no_card_is_refused_as_card_parse_refuses_it(
    bad: list[str],
) -> None:
    with pytest.raises(CardError):
        parse_cards(bad)


def test_the_aa_bonus_row_is_the_best_whose_weakest_hand_the_value_reaches() -> None:
    floors = [(hand_value(tier.weakest), tier) for tier in STANDARD.bonus]
    seen = set()
    for hand in combinations(FULL_DECK[::3], 5):  # 18 cards: every category up to a flush
        value = evaluate(hand)
        expected = next((tier for floor, tier in floors if value >= floor), None)
        assert STANDARD.bonus_tier(value) == expected
        seen.add(expected)
    assert seen == {None, *STANDARD.bonus}
