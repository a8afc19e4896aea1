"""The wire time's parse (issue 31, speed): a time written as every record writes it
(``T``, upper-case ``Z`` or an offset, at most six fraction digits) goes to ``fromisoformat`` as
it is; any other RFC 3339 spelling is rebuilt first, as before. Both give the same datetime, and
every refusal stays a refusal."""

from __future__ import annotations

import itertools
from datetime import datetime

import pytest

from holdem.core.contracts import ContractError, parse
from holdem.core.contracts.base import _RFC3339, _rfc3339


def reference(value: object) -> object:
    """The parse before the fast path (``contracts/base.py`` at 041a0fc)."""
    if not isinstance(value, str):
        return value
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise ValueError("not an RFC 3339 date-time with an offset (Z or +hh:mm)")
    date, time, fraction, offset = match.groups()
    fraction = (fraction or "")[:7]
    try:
        return datetime.fromisoformat(f"{date}T{time}{fraction}{offset.upper()}")
    except ValueError as error:
        raise ValueError(f"not a date-time: {error}") from None


SPELLINGS = [
    f"{date}{sep}{time}{fraction}{offset}"
    for date, sep, time, fraction, offset in itertools.product(
        ["2026-12-05", "2024-02-29", "2026-02-29", "0000-01-01", "9999-12-31", "2026-13-01"],
        ["T", "t", " "],
        ["22:00:00", "23:59:59", "23:59:60", "24:00:00", "00:60:00"],
        ["", ".", ".1", ".123456", ".1234567", ".123456789012"],
        ["Z", "z", "+00:00", "-00:00", "+23:59", "+24:00", "-05:30", "+0100", "+01", ""],
    )
]


def outcome(parse_time: object, value: str) -> object:
    try:
        return parse_time(value)  # type: ignore[operator]
    except ValueError as error:
        return ("refused", str(error))


def test_every_spelling_parses_or_is_refused_as_before() -> None:
    fast = sum(1 for v in SPELLINGS if _RFC3339.fullmatch(v) and v[10] == "T" and v[-1] != "z")
    assert fast > 100  # the fast path is taken, not only the old one
    for value in SPELLINGS:
        assert outcome(_rfc3339, value) == outcome(reference, value), value


@pytest.mark.parametrize(
    "value",
    ["2026-12-05T22:00:00", "2026-12-05 22:00:00Z", "2026-12-05T22:00:00+0100", "1764972000"],
)
def test_a_time_without_an_rfc_3339_offset_is_refused_at_the_boundary(value: str) -> None:
    raw = (
        '{"type": "command.call", "event_id": "e1", "command_id": "c1", "player_id": "p1",'
        f' "round_id": "r1", "occurred_at": "{value}"}}'
    )
    with pytest.raises(ContractError, match="invalid: occurred_at"):
        parse("commands", raw.encode())


def test_fraction_digits_beyond_microseconds_are_dropped_on_both_paths() -> None:
    assert _rfc3339("2026-12-05T22:00:00.1234567Z") == _rfc3339("2026-12-05t22:00:00.123456z")
    assert _rfc3339("2026-12-05T22:00:00.1234567Z") == reference("2026-12-05T22:00:00.1234567Z")
