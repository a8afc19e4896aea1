"""`holdem end-session`: registered in the `holdem` command, arguments checked before anything
connects, an unreachable broker a one-line failure."""

from __future__ import annotations

import pytest

from holdem.client.sessions import end_session_main
from holdem.core.cli import main


def test_the_holdem_command_lists_end_session(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "end-session" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["p1"], ["p1", "t1", "--within", "soon"]])
def test_bad_arguments_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as done:
        end_session_main(argv)
    assert done.value.code == 2


def test_an_unreachable_broker_is_a_one_line_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOLDEM_KAFKA_BOOTSTRAP", "")
    assert end_session_main(["p1", "t1", "--within", "1"]) == 1
    assert "no answer" in capsys.readouterr().err
