"""`holdem history` and `holdem round`: registered in the `holdem` command, arguments checked
before anything connects."""

from __future__ import annotations

import pytest

from holdem.client.history import history_main, round_main
from holdem.core.cli import main


def test_the_holdem_command_lists_history_and_round(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert "history" in listed and "round" in listed


@pytest.mark.parametrize(
    "argv",
    [
        ["p1", "-n", "0"],
        ["p1", "-n", "101"],
        ["p1", "--lang", "de"],
        [],
    ],
)
def test_bad_history_arguments_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as done:
        history_main(argv)
    assert done.value.code == 2


def test_a_round_needs_its_player() -> None:
    with pytest.raises(SystemExit) as done:
        round_main(["r1"])
    assert done.value.code == 2


def test_an_unreachable_broker_is_a_one_line_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOLDEM_KAFKA_BOOTSTRAP", "")
    assert history_main(["p1"]) == 1
    assert "no answer" in capsys.readouterr().err
