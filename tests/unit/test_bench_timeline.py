"""The bench's per-hop timeline (bench/timeline.py): each hop of an open-loop round timed from its
records' own timestamps, split into decide (trigger sent -> answer decided) and produce (answer
decided -> answer sent)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from timeline import Timed, timed, timeline

HOP = "command.call -> round.called (dealer)"


def test_a_hop_is_split_into_decide_and_produce() -> None:
    records = [
        Timed("command.call", "p1-l000001", 1_000, None),
        Timed("round.called", "p1-l000001", 1_050, 1_030.0),
        Timed("command.call", "p2-l000002", 2_000, None),
        Timed("round.called", "p2-l000002", 2_200, 2_100.0),
    ]
    found = timeline(records)[HOP]
    assert found["hop"] == {"p50_ms": 50, "p99_ms": 200, "n": 2}
    assert found["decide"] == {"p50_ms": 30.0, "p99_ms": 100.0, "n": 2}
    assert found["produce"] == {"p50_ms": 20.0, "p99_ms": 100.0, "n": 2}


def test_closed_loop_rounds_and_the_relay_s_decisions_are_left_out() -> None:
    records = [
        Timed("command.call", "p1-r000001", 1_000, None),  # a closed-loop round
        Timed("round.called", "p1-r000001", 1_050, 1_030.0),
        Timed("command.call", "p2-l000002", 2_000, None),
        Timed("round.called", "p2-l000002", 2_200, 5.0),  # a copied template's occurred_at
    ]
    found = timeline(records, decided=False)
    assert found == {HOP: {"hop": {"p50_ms": 200, "p99_ms": 200, "n": 1}}}


def test_a_record_is_read_with_its_decision_time() -> None:
    body = {"type": "round.called", "round_id": "r1", "occurred_at": "1970-01-01T00:00:01.5Z"}
    assert timed(json.dumps(body).encode(), 2_000) == Timed("round.called", "r1", 2_000, 1_500.0)
    assert timed(b'{"type": "wallet.deposited"}', 0) is None
