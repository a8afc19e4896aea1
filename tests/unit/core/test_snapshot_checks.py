"""The checks the services' snapshot codecs share: typed values or SnapshotError."""

from __future__ import annotations

import doctest

import pytest

from holdem.core import snapshot_codec as snapshot
from holdem.core.snapshot_codec import SnapshotError, count, decoding, one_of, time


def test_doctests_pass() -> None:
    assert doctest.testmod(snapshot).failed == 0


@pytest.mark.parametrize(
    ("check", "value"),
    [(count, -1), (count, True), (count, 1.0), (time, "2026-01-01T00:00:00"), (one_of(False), 0)],
)
def test_a_value_of_the_wrong_kind_is_refused(check: object, value: object) -> None:
    with pytest.raises(SnapshotError):
        check(value)  # type: ignore[operator]


def test_decoding_turns_what_a_malformed_snapshot_raises_into_a_snapshot_error() -> None:
    for error in (KeyError("rounds"), TypeError("x"), ValueError("y")):

        def load(error: Exception = error) -> None:
            raise error

        with pytest.raises(SnapshotError, match="not a wallet snapshot"):
            decoding("wallet", load)
