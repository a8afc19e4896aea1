"""Simulator: rounds through deck, strategy and rules; intervals that hold the exact figures."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from holdem.core.strategy import always_call, basic
from holdem.math.sim import Tally, sim_main, simulate

# exact figures from the full enumeration (recomputed by the slow test in test_rtp.py)
ALWAYS_CALL_MAIN = Fraction(1_015_552_978_897, 1_043_017_875_900)
ALWAYS_COMPLETE_BONUS = Fraction(101_357, 108_290)


def test_a_seeded_run_lands_within_four_standard_errors_of_the_exact_figures() -> None:
    tally = simulate(20_000, always_call, ante=10, bonus=5, randbelow=random.Random(11).randrange)
    main, half = tally.main_rtp()
    assert abs(main - float(ALWAYS_CALL_MAIN)) < 2.05 * half  # 4 standard errors
    bonus, half = tally.bonus_rtp()
    assert abs(bonus - float(ALWAYS_COMPLETE_BONUS)) < 2.05 * half
    assert tally.rounds == tally.calls == 20_000


def test_the_same_seed_plays_the_same_rounds() -> None:
    first = simulate(500, basic, randbelow=random.Random(5).randrange)
    second = simulate(500, basic, randbelow=random.Random(5).randrange)
    assert first == second


def test_tally_ratio_and_interval_on_hand_made_rounds() -> None:
    tally = Tally()
    for wagered, returned in ((3, 6), (1, 0), (3, 0), (1, 0)):
        tally.add(wagered, returned, 1, 0)
    ratio, half = tally.main_rtp()
    assert ratio == 6 / 8 and half > 0
    assert tally.bonus_rtp() == (0.0, 0.0)


def test_sim_command_reports_rates_and_intervals(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--rounds", "300", "--strategy", "basic", "--seed", "1", "--no-exact"]
    assert sim_main(argv) == 0
    out = capsys.readouterr().out
    assert "main game RTP" in out and "AA bonus RTP" in out and "rounds/s" in out
