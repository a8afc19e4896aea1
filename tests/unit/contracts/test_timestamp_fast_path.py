"""The wire time's parse (issue 31, speed): a time written as every record writes it
(``T``, upper-case ``Z`` or an offset, at most six fraction digits) goes to ``fromisoformat`` as
it is; any other RFC 3339 spelling is rebuilt first, as before. Both give the same datetime, and
every refusal stays a refusal."""

from __future__ import annotations

import itertools
import json
import sys
from datetime import UTC, datetime
from types import FrameType

import pytest
from pydantic import TypeAdapter, ValidationError

from holdem.core.contracts import ContractError, parse
from holdem.core.contracts.base import _RFC3339, Timestamp, _rfc3339


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


# From a record's bytes the time is checked and built in pydantic-core (a regex, ``str.upper``,
# ``datetime.fromisoformat``); from Python it goes through ``_rfc3339``. Same texts, same answers.
WIRE = TypeAdapter(Timestamp)
NEAR_MISSES = [
    "２０２６-12-05T22:00:00Z",  # full-width digits: Rust's \d would take them
    "2026-12-05T22:00:00٫5Z",
    "2026-12-05T22:00:0٠Z",
    "2026-12-05T22:00:00Z ",
    " 2026-12-05T22:00:00Z",
    "2026-12-05T22:00:00Z\n",
    "2026-12-05T22:00:00ZZ",
    "2026-12-05T22:00:00+01:00:00",
    "2026-12-05T22:00Z",
    "26-12-05T22:00:00Z",
    "2026-12-5T22:00:00Z",
    "",
]


def outcome_of_json(value: str) -> object:
    try:
        return WIRE.validate_json(json.dumps(value), strict=True)
    except ValidationError as error:
        return ("refused", error.errors()[0]["type"])


def outcome_of_python(value: str) -> object:
    try:
        return _rfc3339(value)
    except ValueError as error:
        return ("refused", "rfc3339" if str(error).startswith("not an RFC") else "value_error")


def test_a_time_from_bytes_is_accepted_and_refused_as_from_python() -> None:
    accepted = 0
    for value in [*SPELLINGS, *NEAR_MISSES, *(s.replace("2", "٢") for s in SPELLINGS[:500])]:
        from_json, from_python = outcome_of_json(value), outcome_of_python(value)
        assert from_json == from_python, value
        if isinstance(from_json, datetime):
            accepted += 1
            assert from_json.utcoffset() == from_python.utcoffset(), value  # type: ignore[union-attr]
    assert accepted > 300  # both paths taken, not only refusals


def test_a_refused_shape_says_what_a_wire_time_is() -> None:
    with pytest.raises(ValidationError) as caught:
        WIRE.validate_json(b'"2026-12-05 22:00:00"', strict=True)
    (error,) = caught.value.errors()
    assert (error["type"], error["msg"]) == (
        "rfc3339",
        "not an RFC 3339 date-time with an offset (Z or +hh:mm)",
    )
    with pytest.raises(ValidationError, match=r"month must be in 1\.\.12"):
        WIRE.validate_json(b'"2026-13-05T22:00:00Z"', strict=True)  # the shape, not a date
    with pytest.raises(ValidationError):
        WIRE.validate_json(b"1764972000", strict=True)  # a number is not a time on the wire


def test_the_published_schema_of_a_time_is_unchanged() -> None:
    assert WIRE.json_schema() == {"type": "string", "format": "date-time"}


def test_parsing_a_record_calls_no_python_function_for_its_time() -> None:
    # A cost counter: a Python validator per time was 13% of the streaming audit's profile.
    raw = (
        b'{"type": "command.call", "event_id": "e1", "command_id": "c1", "player_id": "p1",'
        b' "round_id": "r1", "occurred_at": "2026-12-05T22:00:00.123456Z"}'
    )
    parse("commands", raw)  # adapters built, caches warm
    called: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        parsed = parse("commands", raw)
    finally:
        sys.setprofile(None)
    assert parsed.occurred_at == datetime(2026, 12, 5, 22, 0, 0, 123456, tzinfo=UTC)
    assert "_rfc3339" not in called, called
