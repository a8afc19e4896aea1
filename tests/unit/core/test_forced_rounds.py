"""The certification harness: every bad-line class, pass-through, exit status, the sample file."""

from __future__ import annotations

import doctest
import io
import json
from pathlib import Path
from typing import Any

import pytest

from holdem.core import forced_rounds as harness
from holdem.core.cli import main as holdem
from holdem.core.forced_rounds import run, settle_line

SAMPLE = (
    Path(__file__).resolve().parents[3] / "shared" / "core" / "examples" / "settle-sample.jsonl"
)
GOOD: dict[str, Any] = {
    "player": ["As", "Ad"],
    "dealer": ["4c", "4d"],
    "board": ["9h", "7c", "2s", "Kd", "3h"],
    "ante": 10,
    "aa_bonus": 5,
    "decision": "call",
}


def line(**changes: Any) -> str:
    """GOOD with some fields changed; a value of ``...`` removes the field."""
    data = {**GOOD, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...})


def error_code(text: str | bytes) -> str:
    out, ok = settle_line(text, 7)
    assert not ok and out["line"] == 7
    assert out["error"]["message"]
    code: str = out["error"]["code"]
    return code


def test_doctests_pass() -> None:
    assert doctest.testmod(harness).failed == 0


def test_a_good_line_comes_back_with_its_outcome() -> None:
    out, ok = settle_line(line(), 1)
    assert ok
    assert out["outcome"] == {
        "dealer_qualifies": True,
        "result": "win",
        "ante_return": 20,
        "call_return": 40,
        "bonus_return": 40,
        "total_return": 100,
        "player_category": "pair",
        "dealer_category": "pair",
        "bonus_category": "pair",
        "bonus_class": "aces_to_straight",
    }


def test_other_fields_pass_through_untouched_and_in_order() -> None:
    out, _ = settle_line(line(id="r-1", meta={"lab": "x", "n": [1, 2]}), 1)
    assert list(out)[-3:] == ["id", "meta", "outcome"]
    assert (out["id"], out["meta"]) == ("r-1", {"lab": "x", "n": [1, 2]})


def test_an_input_outcome_field_is_replaced() -> None:
    out, _ = settle_line(line(outcome="anything"), 1)
    assert out["outcome"]["result"] == "win"


def test_a_missing_aa_bonus_is_a_zero_side_bet() -> None:
    out, ok = settle_line(line(aa_bonus=...), 1)
    assert ok and out["outcome"]["bonus_return"] == 0 and "aa_bonus" not in out


def test_card_text_is_read_as_card_parse_reads_it() -> None:
    assert settle_line(line(player=["as", "AD"]), 1)[1]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{not json", "invalid_json"),
        (b'{"player": "\xff"}', "invalid_json"),
        ("[1, 2]", "not_an_object"),
        ('"round"', "not_an_object"),
        (line(player=...), "missing_field"),
        (line(dealer=...), "missing_field"),
        (line(board=...), "missing_field"),
        (line(ante=...), "missing_field"),
        (line(decision=...), "missing_field"),
        (line(player="AsAd"), "invalid_cards"),
        (line(board=None), "invalid_cards"),
        (line(player=["As", "Zz"]), "unknown_card"),
        (line(player=["As", "10h"]), "unknown_card"),
        (line(dealer=["4c", 12]), "unknown_card"),
        (line(dealer=["4c", None]), "unknown_card"),
        (line(player=["As", "As"]), "duplicate_card"),
        (line(dealer=["As", "4d"]), "duplicate_card"),
        (line(board=["9h", "7c", "2s", "Kd", "4c"]), "duplicate_card"),
        (line(player=["As"]), "wrong_card_count"),
        (line(dealer=["4c", "4d", "5c"]), "wrong_card_count"),
        (line(board=["9h", "7c", "2s", "Kd"]), "wrong_card_count"),
        (line(board=[]), "wrong_card_count"),
        (line(ante=-10), "invalid_stake"),
        (line(ante=0), "invalid_stake"),
        (line(ante=10.5), "invalid_stake"),
        (line(ante=10.0), "invalid_stake"),
        (line(ante="10"), "invalid_stake"),
        (line(ante=True), "invalid_stake"),
        (line(aa_bonus=-1), "invalid_stake"),
        (line(aa_bonus=False), "invalid_stake"),
        (line(aa_bonus=None), "invalid_stake"),
        (
            '{"player":["As","Ad"],"dealer":["4c","4d"],"board":["9h","7c","2s","Kd","3h"],'
            '"ante":NaN,"decision":"call"}',
            "invalid_stake",
        ),
        (line(decision="raise"), "unknown_decision"),
        (line(decision="Call"), "unknown_decision"),
        (line(decision=None), "unknown_decision"),
    ],
)
def test_each_bad_line_class_has_its_own_code(text: str | bytes, code: str) -> None:
    assert error_code(text) == code


def test_an_error_line_names_the_line_and_echoes_the_input() -> None:
    out, _ = settle_line(line(player=["As", "As"], id=3), 12)
    assert out["line"] == 12
    assert out["error"] == {"code": "duplicate_card", "message": "duplicate card: As"}
    assert out["input"]["id"] == 3
    raw, _ = settle_line("{oops\n", 13)
    assert raw["input"] == "{oops"


def test_bad_lines_do_not_stop_the_run_and_blank_lines_are_skipped() -> None:
    written: list[str] = []
    summary = run([line() + "\n", "\n", "{bad\n", "  \n", line(id=4)], written.append)
    outputs = [json.loads(text) for text in written]
    assert (summary.lines, summary.settled, summary.errors) == (3, 2, 1)
    assert outputs[1]["line"] == 3 and "outcome" in outputs[2]
    assert all(text.endswith("\n") and text.count("\n") == 1 for text in written)


def test_exit_status_is_0_when_every_line_settles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(line() + "\n" + line(decision="fold") + "\n")
    assert harness.main([str(source)]) == 0
    captured = capsys.readouterr()
    assert [json.loads(text)["outcome"]["result"] for text in captured.out.splitlines()] == [
        "win",
        "fold",
    ]
    assert "2 rounds, 2 settled, 0 errors" in captured.err and "lines/s" in captured.err


def test_exit_status_is_1_when_any_line_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(line() + "\n" + line(ante=-1) + "\n")
    assert holdem(["settle", str(source), "--output", str(target)]) == 1
    outputs = [json.loads(text) for text in target.read_text().splitlines()]
    assert outputs[1]["error"]["code"] == "invalid_stake" and outputs[1]["line"] == 2
    assert capsys.readouterr().out == ""


def test_reads_stdin_when_no_file_is_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((line() + "\n").encode())))
    assert harness.main(["--quiet"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["outcome"]["total_return"] == 100 and captured.err == ""


def test_a_missing_input_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert harness.main([str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_the_sample_file_settles_as_each_line_expects(capsys: pytest.CaptureFixture[str]) -> None:
    assert harness.main([str(SAMPLE)]) == 0
    outputs = [json.loads(text) for text in capsys.readouterr().out.splitlines()]
    assert len(outputs) == len(SAMPLE.read_text().splitlines()) >= 20
    for out in outputs:
        differing = {
            k: (v, out["outcome"][k]) for k, v in out["expect"].items() if out["outcome"][k] != v
        }
        assert not differing, out["case"]


def test_the_sample_file_covers_every_ante_row_result_and_bonus_class(
    capsys: pytest.CaptureFixture[str],
) -> None:
    harness.main([str(SAMPLE), "--quiet"])
    outcomes = [json.loads(text)["outcome"] for text in capsys.readouterr().out.splitlines()]
    seen = {key: {o[key] for o in outcomes} for key in ("player_category", "result", "bonus_class")}
    assert {
        "royal_flush",
        "straight_flush",
        "four_of_a_kind",
        "full_house",
        "flush",
        "straight",
    } <= seen["player_category"]
    assert seen["result"] == {"win", "lose", "push", "fold"}
    assert seen["bonus_class"] == {"flush_or_better", "aces_to_straight", "none"}
    assert {False, True} == {o["dealer_qualifies"] for o in outcomes}
