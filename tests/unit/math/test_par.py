"""The PAR sheet: the counting enumeration against the RTP kernel and the published exact RTPs.

The always-call PAR is counted afresh over every flop class (a few CPU minutes: the counting
kernel and, when not cached, the RTP kernel's totals it is checked against); every strategy
through ``holdem certify`` is the slow test.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from holdem.core.cli import main
from holdem.core.flops import flop_classes
from holdem.core.rules import STANDARD
from holdem.math import certify, par, par_render
from holdem.math.batch import kernel_tables
from holdem.math.rtp import COMPLETIONS, pay_arrays
from holdem.math.rtp_kernels import all_flop_totals

ALWAYS_CALL_MAIN = Fraction(1_015_552_978_897, 1_043_017_875_900)
ALWAYS_COMPLETE_BONUS = Fraction(101_357, 108_290)
DEALS = 25_989_600 * COMPLETIONS  # (hole, flop) situations x completions
# the module's fixture counts every flop class: minutes of CPU, so `make test` runs it and
# `make check` does not; the timeout bounds a hung run under this machine's load, it times nothing
pytestmark = [pytest.mark.enumeration, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def always_call() -> par.Par:
    tally = par.count(STANDARD, ["always-call"])["always-call"]
    return par.par(STANDARD, "always-call", tally)


def test_the_always_call_par_is_the_published_exact_rtp(always_call: par.Par) -> None:
    figures = par.sheet_figures(always_call)
    assert figures["main"].rtp == ALWAYS_CALL_MAIN
    assert figures["aa_bonus"].rtp == ALWAYS_COMPLETE_BONUS
    assert always_call.total == DEALS == sum(always_call.combined.values())
    assert all(line.outcome != "fold" for line in always_call.main)  # it never folds
    assert {line.outcome for line in always_call.bonus} == {
        "flush_or_better",
        "aces_to_straight",
        "no bonus hand",
    }
    combined = figures["combined"]
    assert combined.max_win == 100 + 2 + 25  # royal flush, dealer qualifies; flush or better
    assert combined.mean == figures["main"].mean + figures["aa_bonus"].mean
    assert 0 < combined.hit_frequency < 1 and combined.variance > figures["main"].variance


def test_the_json_shares_add_up_to_the_rtp_and_the_probabilities_to_one(
    always_call: par.Par,
) -> None:
    sheet = par_render.as_json([always_call])["pay_tables"]["standard-1"]["always-call"]
    for game, rtp in (("main", ALWAYS_CALL_MAIN), ("aa_bonus", ALWAYS_COMPLETE_BONUS)):
        lines = sheet[game]["outcomes"]
        assert sum(Fraction(o["probability"]["fraction"]) for o in lines) == 1
        assert sum(Fraction(o["rtp_share"]["fraction"]) for o in lines) == rtp
        assert sum(o["combinations"] for o in lines) == DEALS


def test_the_rendering_is_the_same_bytes_twice(always_call: par.Par, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        out.mkdir()
        par_render.write(out, [always_call])
    names = ["par.html", "par.json", "par.md", "par.png"]
    assert sorted(p.name for p in first.iterdir()) == names
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert (first / "par.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "1015552978897/1043017875900" in (first / "par.json").read_text()


def test_certify_refuses_a_par_rtp_that_is_not_the_rtp_sheets(
    always_call: par.Par, monkeypatch: pytest.MonkeyPatch
) -> None:
    tally = par.count(STANDARD, ["always-call"], rows=np.arange(3))["always-call"]
    monkeypatch.setattr(par, "tallies", lambda table, names: {"always-call": tally})
    row: dict[str, Any] = {
        "main_rtp": {"fraction": str(ALWAYS_CALL_MAIN)},
        "aa_bonus_rtp": {"fraction": str(ALWAYS_COMPLETE_BONUS)},
    }
    with pytest.raises(par.ParMismatch, match="always-call: the PAR's main RTP"):
        certify.par_sheet({"standard-1": {"always-call": row}})


def test_counts_that_do_not_price_to_the_rtp_kernels_total_fail_loudly() -> None:
    rows = np.array([5, 900])
    pays, qualify, _ = pay_arrays()
    totals = np.zeros((len(flop_classes()[0]), 1326), dtype=np.int64)
    totals[rows] = all_flop_totals(flop_classes()[0][rows], kernel_tables(7), pays, qualify)
    par.count(STANDARD, ["always-call"], rows=rows, totals=totals)  # the kernels agree
    assert flop_classes()[0][900].tolist() == [8, 29, 45]  # misses hole pairs (0, 1), (50, 51)
    totals[900, 0] += 1
    totals[900, 1325] -= 1
    with pytest.raises(par.ParMismatch, match=r"class 900, hole pair \[0, 1\].*2 situations"):
        par.count(STANDARD, ["always-call"], rows=rows, totals=totals)


@pytest.mark.slow  # every strategy: the counting enumeration and the RTP sheet's strategies
def test_certify_writes_every_strategys_par_and_it_equals_the_rtp_sheet(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert main(["certify", str(first)]) == 0  # it checks each PAR RTP against the RTP sheet
    assert main(["certify", str(second)]) == 0
    for name in ("par.json", "par.md", "par.html", "par.png"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    fresh = par.count(STANDARD)  # not the cache: the enumeration itself, every strategy
    assert {k: v.tolist() for k, v in fresh.items()} == {
        k: v.tolist() for k, v in par.tallies(STANDARD).items()
    }
    optimal = par.sheet_figures(par.par(STANDARD, "optimal", fresh["optimal"]))
    assert f"{optimal['main'].standard_deviation:.4f}" == "2.6129"
    assert f"{float(optimal['main'].hit_frequency):.5f}" == "0.47769"
    assert optimal["combined"].max_win == 127
    assert f"{optimal['combined'].max_win_combinations / DEALS:.3e}" == "3.889e-06"
