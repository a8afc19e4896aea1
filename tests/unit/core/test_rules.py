"""Every rule of docs/rules.md and the sheets: pay tables, qualifying, ties, AA Bonus, folds,
limits."""

from __future__ import annotations

import doctest
from fractions import Fraction
from itertools import combinations

import pytest

from holdem.core import limits as limits_module
from holdem.core import rules as rules_module
from holdem.core.cards import HandCategory, parse_cards
from holdem.core.evaluator import category, evaluate
from holdem.core.rules import (
    ANTE_PAYS,
    RESULTS,
    STANDARD,
    Adjustment,
    BetBelowMinimumError,
    CardCountError,
    DecisionError,
    DuplicateCardError,
    RoundError,
    RoundOutcome,
    StakeError,
    TableLimits,
    UnknownCardError,
    auto_adjust,
    bonus_class,
    bonus_return,
    dealer_qualifies,
    settle,
)

H = HandCategory


def play(
    player: str, dealer: str, board: str, ante: int = 10, bonus: int = 0, decision: str = "call"
) -> RoundOutcome:
    """Settle a round written as card text, e.g. ``play("AsKd", "7c7d", "2h3h4h5s6s")``."""
    return settle(
        parse_cards(player), parse_cards(dealer), parse_cards(board), ante, bonus, decision
    )  # type: ignore[arg-type]


def value(cards: str) -> int:
    return evaluate(parse_cards(cards))


def test_doctests_pass() -> None:
    assert doctest.testmod(rules_module).failed == 0
    assert doctest.testmod(limits_module).failed == 0


# --- the ante pay table: each row, against a dealer who qualifies (pair of 4s) -----------------

ANTE_ROWS = [
    ("AsKs", "QsJsTs2d3c", H.ROYAL_FLUSH, 100),
    ("9h8h", "7h6h5h2c2d", H.STRAIGHT_FLUSH, 20),
    ("KsKh", "KdKc2s7d9c", H.FOUR_OF_A_KIND, 10),
    ("QsQh", "Qd7c7d2s3h", H.FULL_HOUSE, 3),
    ("AhJh", "9h5h2hKc8s", H.FLUSH, 2),
    ("9c8d", "7h6s5cKd2h", H.STRAIGHT, 1),
    ("7s7d", "7cKd2s9hJc", H.THREE_OF_A_KIND, 1),
    ("KsJd", "KhJc2s9h5c", H.TWO_PAIR, 1),
    ("AsAd", "9h7c2sKd3h", H.PAIR, 1),
]


@pytest.mark.parametrize(("player", "board", "hand", "pays"), ANTE_ROWS)
def test_ante_pays_its_row_and_call_pays_1_to_1_when_the_player_beats_a_qualifying_dealer(
    player: str, board: str, hand: HandCategory, pays: int
) -> None:
    outcome = play(player, "4c4d", board, ante=10)
    assert (outcome.player_category, outcome.dealer_qualifies, outcome.result) == (
        hand,
        True,
        "win",
    )
    assert outcome.ante_return == 10 * (1 + pays)
    assert outcome.call_return == 40


def test_high_card_pays_1_to_1_on_the_ante_when_the_dealer_does_not_qualify() -> None:
    outcome = play("AsQd", "Jc8d", "9h6c3sKd2h", ante=10)
    assert outcome.player_category == H.HIGH_CARD
    assert (outcome.result, outcome.ante_return, outcome.call_return) == ("win", 20, 20)


def test_the_ante_table_covers_every_category_and_straight_or_less_pays_1_to_1() -> None:
    assert set(ANTE_PAYS) == set(HandCategory)
    assert {ANTE_PAYS[hand] for hand in HandCategory if hand <= H.STRAIGHT} == {1}
    assert STANDARD.call_multiple == 2 and STANDARD.call_pays == 1


def test_royal_flush_pays_100_to_1_even_when_the_dealer_does_not_qualify() -> None:
    outcome = play("AhKh", "7c2d", "QhJhTh3s9c", ante=5)
    assert (outcome.dealer_qualifies, outcome.ante_return, outcome.call_return) == (False, 505, 10)


# --- dealer qualification: a pair of 4s or better on the best five of seven --------------------


def test_dealer_qualifies_with_exactly_a_pair_of_4s() -> None:
    outcome = play("5h6h", "4c4d", "AhKs9d7c2s")
    assert outcome.dealer_qualifies and outcome.dealer_category == H.PAIR
    assert (outcome.result, outcome.total_return) == ("lose", 0)


def test_a_pair_of_3s_does_not_qualify_so_the_call_pushes_though_the_dealer_is_ahead() -> None:
    outcome = play("5h6h", "3c3d", "AhKs9d7c2s", ante=10)
    assert not outcome.dealer_qualifies
    assert (outcome.result, outcome.ante_return, outcome.call_return) == ("win", 20, 20)


def test_qualification_threshold_sits_between_the_best_pair_of_3s_and_the_worst_pair_of_4s() -> (
    None
):
    assert dealer_qualifies(value("4c4d5h3s2c"))
    assert not dealer_qualifies(value("3c3dAhKsQc"))


@pytest.mark.parametrize(
    ("dealer", "board", "why"),
    [
        ("Jc8d", "4h4s9cKd2c", "the pair of 4s is on the board"),
        ("Ac Kd", "3h3s2c2d9h", "two pair of 3s and 2s beats a pair of 4s"),
        ("Tc9c", "2c5c7cKdQh", "the board completes the dealer's flush"),
        ("6d7h", "3c4s5hKdQh", "the board completes the dealer's straight"),
    ],
)
def test_the_dealers_best_five_of_seven_decides_qualification(
    dealer: str, board: str, why: str
) -> None:
    assert play("AhJs", dealer, board).dealer_qualifies, why


# --- ties and pushes --------------------------------------------------------------------------


def test_board_plays_for_both_hands_is_a_push_of_ante_and_call() -> None:
    outcome = play("2c3d", "2d3c", "AhKhQhJh9h", ante=10, bonus=5)
    assert (outcome.result, outcome.ante_return, outcome.call_return) == ("push", 10, 20)
    assert outcome.total_return == 30


def test_equal_pairs_and_kickers_push_but_a_kicker_decides_otherwise() -> None:
    assert play("AsKd", "AcKc", "7h7d9s4c2h").result == "push"
    assert play("AsQd", "AcJc", "7h7d9s4c2h").result == "win"
    assert play("AsJd", "AcQc", "7h7d9s4c2h").result == "lose"


def test_suits_never_break_a_tie() -> None:
    assert play("AsKs", "AhKh", "QdJcTc3h2d").result == "push"


def test_a_tie_with_a_non_qualifying_dealer_still_pays_the_ante() -> None:
    outcome = play("2c3d", "2d3c", "AhKs9d7c5h")
    assert not outcome.dealer_qualifies
    assert (outcome.result, outcome.ante_return, outcome.call_return) == ("win", 20, 20)


# --- straights with the ace low ---------------------------------------------------------------


def test_the_wheel_is_the_lowest_straight() -> None:
    outcome = play("Ac5c", "5d6h", "2h3d4s9cKd")
    assert outcome.player_category == H.STRAIGHT and outcome.dealer_category == H.STRAIGHT
    assert outcome.result == "lose"
    assert play("Ac5c", "KsKd", "2h3d4s9cJd").result == "win"


def test_the_steel_wheel_pays_as_a_straight_flush() -> None:
    outcome = play("Ah5h", "KsKd", "2h3h4h9cJd", ante=10)
    assert (outcome.player_category, outcome.ante_return) == (H.STRAIGHT_FLUSH, 210)


def test_q_k_a_2_3_is_not_a_straight() -> None:
    assert play("QcKd", "8h8s", "Ah2s3d7c9h").player_category == H.HIGH_CARD


# --- the AA Bonus: hole cards + flop only -----------------------------------------------------


@pytest.mark.parametrize(
    ("hole", "flop", "expected"),
    [
        ("AsAd", "2c7h9s", "aces_to_straight"),
        ("As7d", "Ac2h9s", "aces_to_straight"),
        ("KsKd", "7c7h2s", "aces_to_straight"),
        ("KsQd", "7c7h2s", "none"),
        ("2s2d", "2c9hKd", "aces_to_straight"),
        ("9c8d", "7h6s5c", "aces_to_straight"),
        ("As5d", "2c3h4s", "aces_to_straight"),
        ("KsKd", "2c7h9s", "none"),
        ("AsKd", "2c7h9s", "none"),
        ("2h7h", "9hJhKh", "flush_or_better"),
        ("QsQh", "Qd7c7d", "flush_or_better"),
        ("KsKh", "KdKc2s", "flush_or_better"),
        ("9h8h", "7h6h5h", "flush_or_better"),
        ("AsKs", "QsJsTs", "flush_or_better"),
    ],
)
def test_aa_bonus_class_of_the_first_five_cards(hole: str, flop: str, expected: str) -> None:
    assert bonus_class(parse_cards(hole), parse_cards(flop)) == expected


def test_aa_bonus_boundaries_are_the_weakest_hands_of_each_row() -> None:
    assert STANDARD.bonus_tier(value("AcAd4h3s2c")) is not None
    assert STANDARD.bonus_tier(value("KcKdAhQsJc")) is None
    best_straight, worst_flush = value("AcKdQhJsTc"), value("7c5c4c3c2c")
    tiers = STANDARD.bonus_tier(best_straight), STANDARD.bonus_tier(worst_flush)
    assert [tier.name if tier else None for tier in tiers] == [
        "aces_to_straight",
        "flush_or_better",
    ]
    assert category(worst_flush) == H.FLUSH and category(value("AcAd4h3s2c")) == H.PAIR


def test_aa_bonus_pays_25_to_1_and_7_to_1_when_the_player_calls() -> None:
    assert play("2h7h", "4c4d", "9hJhKh3c3d", bonus=5).bonus_return == 130
    assert play("AsAd", "4c4d", "9h7c2sKd3h", bonus=5).bonus_return == 40
    assert play("KsKd", "4c4d", "9h7c2sJd3h", bonus=5).bonus_return == 0


def test_turn_and_river_do_not_improve_the_aa_bonus() -> None:
    outcome = play("AsKd", "4c4d", "2c7h9sAcAd", bonus=5)
    assert outcome.player_category == H.THREE_OF_A_KIND
    assert (outcome.bonus_category, outcome.bonus_class, outcome.bonus_return) == (
        H.HIGH_CARD,
        "none",
        0,
    )


def test_aa_bonus_is_settled_independently_of_the_main_game() -> None:
    outcome = play("AsAd", "9c9d", "9h7c2sKd3h", bonus=5)
    assert (outcome.result, outcome.ante_return, outcome.call_return, outcome.bonus_return) == (
        "lose",
        0,
        0,
        40,
    )


# --- folding ----------------------------------------------------------------------------------


def test_a_fold_loses_ante_and_a_winning_aa_bonus_and_returns_nothing() -> None:
    outcome = play("AsAd", "KcKd", "Ah7c2s9d3h", bonus=5, decision="fold")
    assert outcome.bonus_class == "aces_to_straight"
    assert (outcome.result, outcome.ante_return, outcome.call_return, outcome.bonus_return) == (
        "fold",
        0,
        0,
        0,
    )
    assert outcome.total_return == 0


def test_dealer_qualification_is_reported_on_folds_too() -> None:
    assert play("7s2d", "KcKd", "Ah7c2s9d3h", decision="fold").dealer_qualifies
    assert not play("7s2d", "Jc8d", "9h6c3sKd4h", decision="fold").dealer_qualifies


def test_the_results_table_is_the_sheets_table() -> None:
    assert RESULTS["dealer_not_qualified"] == ("win", "paid", "push")
    assert RESULTS["tie"] == ("push", "push", "push")
    assert RESULTS["player_wins"] == ("win", "paid", "paid")
    assert RESULTS["dealer_wins"] == ("lose", "lost", "lost")
    assert RESULTS["player_folds"] == ("fold", "lost", "lost")


def test_the_outcome_on_the_wire_names_categories_by_their_keys() -> None:
    wire = play("AsKs", "4c4d", "QsJsTs2d3c", bonus=5).to_wire()
    assert wire["player_category"] == "royal_flush" and wire["bonus_class"] == "flush_or_better"
    assert wire["total_return"] == wire["ante_return"] + wire["call_return"] + wire["bonus_return"]  # type: ignore[operator]


# --- input validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("player", "dealer", "board", "error"),
    [
        ("As", "4c4d", "9h7c2sKd3h", CardCountError),
        ("AsAd", "4c4d4h", "9h7c2sKd3h", CardCountError),
        ("AsAd", "4c4d", "9h7c2sKd", CardCountError),
        ("AsAd", "4c4d", "9h7c2sKdAs", DuplicateCardError),
        ("AsAd", "AsKd", "9h7c2sKh3h", DuplicateCardError),
    ],
)
def test_cards_must_be_2_2_5_and_distinct(
    player: str, dealer: str, board: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        play(player, dealer, board)


@pytest.mark.parametrize("bad", [52, -1, True, "As", 3.0])
def test_card_codes_must_be_ints_0_to_51(bad: object) -> None:
    with pytest.raises(UnknownCardError):
        settle((bad, 1), (2, 3), (4, 5, 6, 7, 8), 10, 0, "call")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ante", "bonus"), [(0, 0), (-1, 0), (10, -1), (True, 0), (10, False), (10.0, 0), ("10", 0)]
)
def test_stakes_must_be_non_negative_ints_and_the_ante_positive(
    ante: object, bonus: object
) -> None:
    with pytest.raises(StakeError):
        play("AsAd", "4c4d", "9h7c2sKd3h", ante=ante, bonus=bonus)  # type: ignore[arg-type]


@pytest.mark.parametrize("decision", ["raise", "CALL", "", None])
def test_the_decision_is_call_or_fold(decision: object) -> None:
    with pytest.raises(DecisionError):
        play("AsAd", "4c4d", "9h7c2sKd3h", decision=decision)  # type: ignore[arg-type]


def test_every_input_error_is_a_round_error_with_a_code() -> None:
    for error in (CardCountError, DuplicateCardError, UnknownCardError, StakeError, DecisionError):
        assert issubclass(error, RoundError) and error.code


# --- table limits and auto-adjust -------------------------------------------------------------

LIMITS = TableLimits(ante_min=100, ante_max=10_000, bonus_max=5_000, chips=(100, 500, 2_500))


def test_bets_within_limits_are_unchanged() -> None:
    adjusted = auto_adjust(100, 5_000, LIMITS)
    assert (adjusted.ante, adjusted.aa_bonus, adjusted.adjustments, adjusted.adjusted) == (
        100,
        5_000,
        (),
        False,
    )


def test_auto_adjust_lowers_each_bet_above_its_max_and_reports_it() -> None:
    adjusted = auto_adjust(12_000, 9_000, LIMITS)
    assert (adjusted.ante, adjusted.aa_bonus) == (10_000, 5_000)
    assert adjusted.adjustments == (
        Adjustment("ante", 12_000, 10_000),
        Adjustment("aa_bonus", 9_000, 5_000),
    )
    assert auto_adjust(500, 9_000, LIMITS).adjustments == (Adjustment("aa_bonus", 9_000, 5_000),)


def test_an_ante_below_the_minimum_is_rejected_not_adjusted() -> None:
    with pytest.raises(BetBelowMinimumError):
        auto_adjust(99, 0, LIMITS)


@pytest.mark.parametrize(("ante", "bonus"), [(-100, 0), (100, -1), (True, 0), (100.0, 0)])
def test_auto_adjust_rejects_stakes_that_are_not_amounts(ante: object, bonus: object) -> None:
    with pytest.raises(StakeError):
        auto_adjust(ante, bonus, LIMITS)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "limits",
    [(0, 10, 5), (20, 10, 5), (10, 20, -1)],
    ids=["zero min", "min above max", "negative bonus max"],
)
def test_inconsistent_table_limits_are_refused(limits: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError):
        TableLimits(*limits)


# --- the published AA Bonus RTP pins down what "Pair of Aces to Straight" covers ---------------


@pytest.mark.slow
def test_aa_bonus_alone_returns_the_published_93_60_percent_over_all_five_card_hands() -> None:
    # Calling on every bonus win makes the bonus RTP its plain value over all C(52,5) first fives:
    # the sheets' "side-bet optimal" 93.60%. It holds only if two pair of any ranks, trips and
    # straights all pay 7 to 1.
    returned = sum(bonus_return(evaluate(five), 1) for five in combinations(range(52), 5))
    assert Fraction(returned, 2_598_960) == Fraction(101_357, 108_290)
    assert round(100 * returned / 2_598_960, 2) == 93.60
