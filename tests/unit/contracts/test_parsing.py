"""Every bad record gets a typed reason; unknown optional fields are ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.schema_mutations import validator

from holdem.core.contracts import MAX_AMOUNT, ContractError, PlaceBet, Reason, parse

SCHEMAS = Path(__file__).resolve().parents[3] / "docs" / "contracts" / "schemas"
GOOD = {
    "type": "command.place_bet",
    "event_id": "e1",
    "command_id": "c1",
    "player_id": "p1",
    "round_id": "r1",
    "occurred_at": "2026-01-01T00:00:00Z",
    "currency": "EUR",
    "ante": 500,
}


def raw(**changes: object) -> bytes:
    body = {**GOOD, **changes}
    return json.dumps({k: v for k, v in body.items() if v is not None}).encode()


def test_a_valid_command_parses_and_ignores_unknown_fields() -> None:
    bet = parse("commands", raw(table_colour="green"))
    assert isinstance(bet, PlaceBet) and bet.ante == 500 and bet.aa_bonus == 0


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (b"{not json", Reason.MALFORMED),
        (b"[1, 2]", Reason.MALFORMED),
        (b'"text"', Reason.MALFORMED),
        (raw(type="command.teleport"), Reason.UNKNOWN_TYPE),
        (raw(type=None), Reason.UNKNOWN_TYPE),
        (raw(ante=-5), Reason.INVALID),
        (raw(ante=0), Reason.INVALID),
        (raw(ante=5.5), Reason.INVALID),
        (raw(ante="500"), Reason.INVALID),
        (raw(ante=True), Reason.INVALID),
        (raw(ante=MAX_AMOUNT + 1), Reason.INVALID),
        (raw(aa_bonus=-1), Reason.INVALID),
        (raw(currency="euro"), Reason.INVALID),
        (raw(player_id=None), Reason.INVALID),
        (raw(round_id="r 1"), Reason.INVALID),
        (raw(occurred_at="yesterday"), Reason.INVALID),
    ],
)
def test_bad_records_are_refused_with_a_typed_reason(record: bytes, reason: Reason) -> None:
    with pytest.raises(ContractError) as refused:
        parse("commands", record)
    assert refused.value.reason is reason


def test_the_reason_names_the_offending_field() -> None:
    with pytest.raises(ContractError) as refused:
        parse("commands", raw(ante=-5))
    assert refused.value.detail.startswith("ante:")


def test_messages_are_frozen() -> None:
    bet = parse("commands", raw())
    with pytest.raises(ValueError):
        bet.ante = 1


@pytest.mark.parametrize(
    ("version", "table_id"), [(1, None), (1, "eur-low"), (2, None), (2, "eur-low"), (None, None)]
)
def test_a_place_bet_is_read_as_its_published_schema_allows(
    version: int | None, table_id: str | None
) -> None:
    """Issue 29 defect 12: the v2 schema makes table_id optional and the v1 schema allows one;
    the service reads each PlaceBet its version's published schema accepts. A bet without a
    table plays at the deployment's default table, one naming a table at that table."""
    body = json.loads(raw(version=version, table_id=table_id))
    schema = SCHEMAS / f"command.place_bet.v{version or 1}.json"
    assert validator(json.loads(schema.read_text())).is_valid(body)

    bet = parse("commands", json.dumps(body))

    assert isinstance(bet, PlaceBet) and bet.table_id == table_id
    assert bet.version == (version or 1)
