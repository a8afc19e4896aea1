"""Exact game math: flop classes, the enumeration kernel against a direct count, EV spots."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from holdem.core.cards import parse_cards
from holdem.core.rules import STANDARD, bonus_return
from holdem.math.batch import evaluate_batch, kernel_tables
from holdem.math.rtp import (
    COMPLETIONS,
    PAIRS,
    Enumeration,
    enumerate_all,
    ev_main,
    flop_classes,
    hole_counts,
    pay_arrays,
    report,
    situation_grid,
    strategy_calls,
)
from holdem.math.rtp_kernels import all_flop_totals
from holdem.math.rtp_symmetry import SUIT_PERMUTATIONS

ALWAYS_COMPLETE_BONUS = Fraction(101_357, 108_290)  # 93.60%, the sheet's side-bet figure
OPTIMAL_MAIN = Fraction(165_507_034_771, 166_870_951_848)  # 99.18%
ALWAYS_CALL_MAIN = Fraction(1_015_552_978_897, 1_043_017_875_900)


def test_the_22100_flops_fall_into_1755_suit_classes() -> None:
    flops, weights, row, perm = flop_classes()
    assert (len(flops), int(weights.sum())) == (1755, 22_100)
    for flop in itertools.islice(itertools.combinations(range(52), 3), 0, None, 97):
        code = flop[0] * 2704 + flop[1] * 52 + flop[2]
        image = sorted(c & ~3 | int(SUIT_PERMUTATIONS[perm[code]][c & 3]) for c in flop)
        assert image == flops[row[code]].tolist()


@pytest.mark.parametrize("flop", ["2c7h9s", "AsKsQs", "5d5h5c", "8c8dKc", "2c3c4d"])
def test_the_sorted_scan_matches_a_direct_count_for_every_hole(flop: str) -> None:
    """The kernel (suit symmetry, radix sort, inclusion-exclusion) against plain loops."""
    cards = np.array([parse_cards(flop)], dtype=np.int64)
    pays, qualify, _ = pay_arrays()
    totals = all_flop_totals(cards, kernel_tables(7), pays, qualify)[0]
    rng = np.random.default_rng(len(flop))
    holes = [p for p in PAIRS.tolist() if not set(p) & set(cards[0].tolist())]
    for k in rng.choice(len(holes), 6, replace=False):
        hole = holes[k]
        direct = hole_counts(hole, cards[0].tolist())
        assert int(direct[:4].sum()) == COMPLETIONS
        assert totals[PAIRS.tolist().index(hole)] == direct[4]


def test_a_royal_flush_on_the_flop_never_loses() -> None:
    unqualified, wins, ties, losses, total = hole_counts(
        parse_cards("AsKs"), parse_cards("QsJsTs")
    ).tolist()
    assert (ties, losses, unqualified + wins) == (0, 0, COMPLETIONS)
    assert total == 100 * unqualified + 102 * wins  # 100 to 1, plus the call 1 to 1


def test_quad_aces_lose_only_to_the_thirty_straight_flushes_left() -> None:
    """Only a straight flush beats them: A-5 in hearts or clubs, T-A in hearts or clubs, 2-6 in
    diamonds. Each needs all four free cards of its run, split 6 ways between dealer and
    turn/river: 5 x 6 = 30 losses, no ties."""
    counts = hole_counts(parse_cards("AsAd"), parse_cards("AhAc2d")).tolist()
    assert (counts[2], counts[3]) == (0, 30)
    assert counts[4] == 10 * counts[0] + 12 * counts[1] - 3 * 30


def test_always_completing_the_bonus_returns_the_five_card_count() -> None:
    """Independent count over all C(52,5) five-card hands against the situation grid."""
    hands = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(52), 5)), np.uint8
    ).reshape(-1, 5)
    per_value = np.bincount(evaluate_batch(hands), minlength=7462)
    returned = sum(int(n) * bonus_return(v, 1) for v, n in enumerate(per_value.tolist()))
    assert Fraction(returned, len(hands)) == ALWAYS_COMPLETE_BONUS
    valid, bonus = situation_grid()
    weights = flop_classes()[1][:, None]
    assert Fraction(int((weights * bonus).sum()), int((weights * valid).sum())) == (
        ALWAYS_COMPLETE_BONUS
    )


def test_report_divides_returns_by_wagers_on_a_hand_made_grid() -> None:
    # two situations of weight 1: one called (returns 3 + 2 antes on average), one folded
    enum = Enumeration(
        flops=np.zeros((1, 3), dtype=np.int64),
        weights=np.array([1]),
        totals=np.array([[2 * COMPLETIONS, -5 * COMPLETIONS]]),
        valid=np.array([[True, True]]),
        bonus=np.array([[26, 8]]),
    )
    r = report(enum, np.array([[True, False]]), "test")
    assert r.main_rtp == Fraction(5, 4)  # 5 returned of 3 + 1 wagered
    assert r.house_edge == Fraction(-1, 2)  # +2 and -1 antes
    assert r.call_frequency == Fraction(1, 2)
    assert r.bonus_rtp == Fraction(26, 2)  # only the called bonus pays
    assert r.element_of_risk == Fraction(-1, 4)


def test_ev_command_prints_the_exact_ev_and_the_decision(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert ev_main(["AsKd", "2c7h9s"]) == 0
    out = capsys.readouterr().out
    assert "EV(call) = -84461/356730" in out and "decision: call" in out
    assert ev_main(["AsKd", "2c7hAs"]) == 2  # a card twice


def test_pay_arrays_follow_the_rules_pay_table() -> None:
    ante, qualify, bonus = pay_arrays()
    assert ante.max() == STANDARD.ante[max(STANDARD.ante)] == 100
    assert sorted(set(bonus.tolist())) == [0, 8, 26]
    assert qualify == int(evaluate_batch(np.array([parse_cards("4c4d5h3s2c")]))[0])


@pytest.mark.slow
def test_full_enumeration_reproduces_the_published_figures() -> None:
    enum = enumerate_all(progress=False)
    optimal = report(enum, strategy_calls(enum, "optimal"), "optimal")
    assert optimal.main_rtp == OPTIMAL_MAIN
    assert round(float(optimal.main_rtp) * 100, 2) == 99.18
    assert round(float(optimal.house_edge) * 100, 2) == 2.16
    assert round(float(optimal.element_of_risk) * 100, 2) == 0.82
    always = report(enum, strategy_calls(enum, "always-call"), "always-call")
    assert (always.main_rtp, always.bonus_rtp) == (ALWAYS_CALL_MAIN, ALWAYS_COMPLETE_BONUS)
    bonus = report(enum, strategy_calls(enum, "optimal-bonus"), "optimal-bonus")
    assert bonus.bonus_rtp == ALWAYS_COMPLETE_BONUS
    assert optimal.main_rtp > bonus.main_rtp > always.main_rtp
