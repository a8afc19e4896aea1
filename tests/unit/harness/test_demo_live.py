"""The demo's live view without Kafka: plain lines off a terminal, and the RTP picture."""

from __future__ import annotations

import asyncio
import doctest
import io
from types import ModuleType

import pytest

import holdem.harness.demo_live as demo_live
import holdem.harness.demo_plot as demo_plot
from holdem.core.contracts import RoundVoided, Settled
from holdem.harness.load import Tally


@pytest.mark.parametrize("module", [demo_live, demo_plot], ids=lambda m: m.__name__)
def test_docstrings_run(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0, result


def settled(wagered: int, returned: int) -> Settled:
    return Settled.model_construct(
        result="win" if returned else "lose",
        ante=wagered // 3,
        call=wagered - wagered // 3,
        ante_return=returned,
        call_return=0,
        aa_bonus=0,
        bonus_return=0,
    )


def test_each_settled_round_adds_a_point_to_the_rtp_trajectory() -> None:
    tally = Tally()
    for returned in (0, 600, 300):
        tally.record(settled(300, returned))
    tally.record(RoundVoided.model_construct())

    assert [n for n, _, _ in tally.trajectory] == [2, 3]
    assert tally.trajectory[-1][1] == pytest.approx(900 / 900)
    assert tally.outcomes["voided"] == 1


async def test_off_a_terminal_the_view_prints_plain_lines_ending_with_the_final_state() -> None:
    tally, out = Tally(), io.StringIO()
    async with demo_live.live_view(tally, asked=3, exact=0.99, out=out):
        tally.record(settled(300, 0))
        tally.record(settled(300, 600))
        await asyncio.sleep(0)

    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("progress: 2/3 rounds, ")
    assert "main RTP 100.00% ± " in lines[-1] and "(exact 99.00%)" in lines[-1]


def test_the_picture_is_a_png_and_an_empty_run_draws_none(tmp_path) -> None:
    points = [(n, 1.0 - 1 / n, 1 / n) for n in range(2, 5_000)]
    path = demo_plot.plot_rtp(points, 0.988, tmp_path / "rtp.png", "basic")

    assert path.read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ValueError):
        demo_plot.plot_rtp([], 0.988, tmp_path / "none.png", "basic")
