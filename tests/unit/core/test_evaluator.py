"""Hand evaluator: known counts, known hands, batch = single, and agreement with phevaluator."""

from __future__ import annotations

import itertools
import random
import runpy
from collections import Counter
from collections.abc import Iterable
from math import comb
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from phevaluator import evaluate_cards

from holdem.core.cards import HandCategory, parse_cards
from holdem.core.evaluator import VALUE_COUNT, category, evaluate
from holdem.core.evaluator_tables import build_tables, shipped_tables
from holdem.math.batch import evaluate_batch, kernel_tables

C = HandCategory
ROOT = Path(__file__).resolve().parents[3]
FIVE_CARD_COUNTS = {
    C.HIGH_CARD: 1_302_540,
    C.PAIR: 1_098_240,
    C.TWO_PAIR: 123_552,
    C.THREE_OF_A_KIND: 54_912,
    C.STRAIGHT: 10_200,
    C.FLUSH: 5_108,
    C.FULL_HOUSE: 3_744,
    C.FOUR_OF_A_KIND: 624,
    C.STRAIGHT_FLUSH: 36,
    C.ROYAL_FLUSH: 4,
}
SEVEN_CARD_COUNTS = {
    C.HIGH_CARD: 23_294_460,
    C.PAIR: 58_627_800,
    C.TWO_PAIR: 31_433_400,
    C.THREE_OF_A_KIND: 6_461_620,
    C.STRAIGHT: 6_180_020,
    C.FLUSH: 4_047_644,
    C.FULL_HOUSE: 3_473_184,
    C.FOUR_OF_A_KIND: 224_848,
    C.STRAIGHT_FLUSH: 37_260,
    C.ROYAL_FLUSH: 4_324,
}


def value(text: str) -> int:
    return evaluate(parse_cards(text))


def all_hands(size: int, first: int | None = None) -> npt.NDArray[np.uint8]:
    """Every ``size``-card hand as rows (only those whose lowest card is ``first`` if given)."""
    combos: Iterable[tuple[int, ...]]
    if first is None:
        combos = itertools.combinations(range(52), size)
        count = comb(52, size)
    else:
        rest = itertools.combinations(range(first + 1, 52), size - 1)
        combos = ((first, *r) for r in rest)
        count = comb(51 - first, size - 1)
    flat = np.fromiter(itertools.chain.from_iterable(combos), dtype=np.uint8, count=count * size)
    return flat.reshape(count, size)


def random_deals(rng: np.random.Generator, n: int, k: int) -> npt.NDArray[np.uint8]:
    """``n`` rows of ``k`` distinct cards: the first ``k`` steps of a Fisher-Yates shuffle."""
    deck = np.tile(np.arange(52, dtype=np.uint8), (n, 1))
    rows = np.arange(n)
    for i in range(k):
        j = rng.integers(i, 52, n)
        deck[rows, i], deck[rows, j] = deck[rows, j], deck[rows, i]
    return deck[:, :k].copy()


def category_counts(values: npt.NDArray[np.int32]) -> dict[HandCategory, int]:
    per_value = np.bincount(values, minlength=VALUE_COUNT)
    by_category = np.bincount(shipped_tables().category, weights=per_value, minlength=10)
    return {C(c): int(n) for c, n in enumerate(by_category)}


def test_every_five_card_hand_falls_in_its_known_category() -> None:
    assert category_counts(evaluate_batch(all_hands(5))) == FIVE_CARD_COUNTS


def test_there_are_7462_distinct_values_and_every_one_occurs() -> None:
    values = evaluate_batch(all_hands(5))
    assert np.unique(values).tolist() == list(range(VALUE_COUNT))


@pytest.mark.slow
def test_every_seven_card_hand_falls_in_its_known_category() -> None:
    totals: Counter[HandCategory] = Counter()
    for first in range(46):
        totals.update(category_counts(evaluate_batch(all_hands(7, first))))
    assert dict(totals) == SEVEN_CARD_COUNTS


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("As2d3h4c5s", "2d3h4c5s6s"),  # the wheel is the lowest straight
        ("KsKdQhQc2s", "KsKdQhQc3s"),  # the kicker decides two pair
        ("AsKsQsJs9s", "2c2d2h3c3d"),  # full house beats flush
        ("9s8s7s6s5s", "TsJsQsKsAs"),
        ("AhAdAcKsQs", "2h3h4h5h6h"),  # straight flush beats trips
        ("AsKdQhJc9s", "2s2d3h4c5s"),  # any pair beats ace high
    ],
)
def test_hands_compare_in_poker_order(lower: str, higher: str) -> None:
    assert value(lower) < value(higher)


def test_suits_never_break_ties() -> None:
    assert value("AsKdQh9c7s") == value("AhKcQd9s7h")
    assert value("2c2d5h5s9c8d7h") == value("2h2s5c5d9s8h7c")


def test_best_five_of_seven_ignores_the_two_unused_cards() -> None:
    assert value("AsAdKhKcQs3d2c") == value("AhAcKsKdQc")


def test_categories_of_named_hands() -> None:
    assert category(value("AsKsQsJsTs")) is C.ROYAL_FLUSH
    assert category(value("KsQsJsTs9s")) is C.STRAIGHT_FLUSH
    assert category(value("5d4d3d2dAd")) is C.STRAIGHT_FLUSH
    assert category(value("As2d3h4c5s9c9d")) is C.STRAIGHT
    assert category(value("7h7d7c7s2d")) is C.FOUR_OF_A_KIND
    assert category(value("7h7d7c2s2d2c3h")) is C.FULL_HOUSE
    assert category(value("Ah9h7h4h2hAdAc")) is C.FLUSH
    assert category(value("QhKdAc2s3h")) is C.HIGH_CARD


def test_five_six_and_seven_cards_agree_on_the_same_best_five() -> None:
    assert value("AsKsQsJs9s") == value("AsKsQsJs9s2c") == value("AsKsQsJs9s2c3d")


def test_evaluate_refuses_other_hand_sizes() -> None:
    with pytest.raises(ValueError, match="5, 6 or 7"):
        evaluate([1, 2, 3, 4])


def test_evaluate_batch_refuses_bad_codes() -> None:
    with pytest.raises(ValueError, match=r"0\.\.51"):
        evaluate_batch(np.array([[1, 2, 3, 4, 60]]))


def test_single_hand_and_batch_agree_for_every_size() -> None:
    rng = np.random.default_rng(7)
    for size in (5, 6, 7):
        hands = rng.random((20_000, 52)).argsort(axis=1)[:, :size].astype(np.uint8)
        singles = [evaluate(row) for row in hands.tolist()]
        assert evaluate_batch(hands).tolist() == singles
        assert [evaluate(row) for row in hands[:200]] == singles[:200]  # numpy ints too


def test_the_shipped_tables_are_exactly_the_ones_built_from_first_principles() -> None:
    built, shipped = build_tables(), shipped_tables()
    for name in ("card_key", "flush_suit", "flush", "category"):
        fresh, stored = getattr(built, name), getattr(shipped, name)
        assert fresh.dtype == stored.dtype and np.array_equal(fresh, stored), name
    for fresh, stored in zip(
        built.rank_sums + built.rank_values, shipped.rank_sums + shipped.rank_values, strict=True
    ):
        assert fresh.dtype == stored.dtype and np.array_equal(fresh, stored)


def test_the_generated_module_is_what_the_script_writes_today() -> None:
    """scripts/generate_core_data.py would write evaluator_data.py byte for byte as it is."""
    script = runpy.run_path(str(ROOT / "scripts/generate_core_data.py"))
    module = ROOT / "shared/core/src/holdem/core/evaluator_data.py"
    assert module.read_text() == script["evaluator_module"]()


def test_kernel_tables_hash_every_rank_sum_to_its_value() -> None:
    tables = shipped_tables()
    for size in (5, 6, 7):
        _, _, _, offsets, plain = kernel_tables(size)
        sums = tables.rank_sums[size - 5]
        assert np.array_equal(
            plain[offsets[sums >> 8] + (sums & 255)], tables.rank_values[size - 5]
        )


def test_a_million_random_showdowns_agree_with_phevaluator() -> None:
    """Sign of every head-to-head comparison matches (phevaluator: lower is better)."""
    rng = np.random.default_rng(2024)
    n = 1_000_000
    deck = random_deals(rng, n, 9)
    ours_a = evaluate_batch(deck[:, :7])
    ours_b = evaluate_batch(deck[:, np.r_[0:5, 7:9]])
    board = deck.tolist()
    theirs = np.array([(evaluate_cards(*r[:7]), evaluate_cards(*r[:5], *r[7:])) for r in board])
    assert np.array_equal(np.sign(ours_a - ours_b), np.sign(theirs[:, 1] - theirs[:, 0]))


def test_values_are_phevaluators_ranks_turned_upside_down() -> None:
    """Both are dense ranks of the 7,462 distinct hands; phevaluator counts 1 = royal flush."""
    rng = random.Random(5)
    hands = [rng.sample(range(52), rng.choice((5, 6, 7))) for _ in range(20_000)]
    assert [evaluate(h) for h in hands] == [VALUE_COUNT - evaluate_cards(*h) for h in hands]
