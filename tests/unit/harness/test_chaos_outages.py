"""`make chaos`'s phase selection and the outages phase's schedule (issue 26 item 3), no broker."""

from __future__ import annotations

import random
from typing import Any

import pytest

from holdem.harness.chaos import Chaos, Figures, parse_args
from holdem.harness.chaos_outages import Outages, schedule


def test_chaos_phases_come_from_the_environment_or_the_flag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHAOS_PHASES", "outages")
    config = parse_args(["--outage-s", "40,90", "--outage-rounds", "60", "--seed", "27"])
    assert config.phases == ("outages",)
    assert config.outage_s == (40.0, 90.0) and config.outage_rounds == 60
    monkeypatch.delenv("CHAOS_PHASES")
    assert parse_args(["--nodes", "1"]).phases == ("single",)
    assert parse_args(["--phases", "single,outages"]).phases == ("single", "outages")
    with pytest.raises(SystemExit):
        parse_args(["--phases", "everything"])


def test_the_three_steps_fire_at_even_marks_in_a_seeded_order() -> None:
    def steps(seed: int) -> list[tuple[int, str]]:
        none: Any = None
        chaos = Chaos(none, none, Figures("outages"), none, random.Random(seed))
        return [(mark, action.__name__) for mark, action in schedule(Outages(chaos, (1, 2)), 60)]

    first = steps(27)
    assert [mark for mark, _ in first] == [15, 30, 45]
    assert {name for _, name in first} == {
        "outage_killing_a_service",
        "outage_then_all_killed",
        "twins_through_a_restart",
    }
    assert steps(27) == first  # the same seed, the same order
