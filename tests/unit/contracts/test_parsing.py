"""Every bad record gets a typed reason. A command, admin command or query refuses a field its
version does not declare, naming it; an event or reply ignores unknown fields (ADR 038)."""

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


def test_a_valid_command_parses() -> None:
    bet = parse("commands", raw())
    assert isinstance(bet, PlaceBet) and bet.ante == 500 and bet.aa_bonus == 0


@pytest.mark.parametrize("field", ["aa_bonsu", "table_colour", "pad"])
def test_a_command_with_a_field_its_version_does_not_declare_is_refused_naming_it(
    field: str,
) -> None:
    with pytest.raises(ContractError) as refused:
        parse("commands", raw(**{field: "x" * 10}))
    assert refused.value.reason == Reason.INVALID and field in refused.value.detail


def test_a_v1_place_bet_names_its_table_as_its_published_schema_declares() -> None:
    bet = parse("commands", raw(version=1, table_id="eur-low"))
    assert isinstance(bet, PlaceBet) and bet.version == 1 and bet.table_id == "eur-low"
    v1 = json.loads((SCHEMAS / "command.place_bet.v1.json").read_text())
    assert validator(v1).is_valid(json.loads(raw(version=1, table_id="eur-low")))


def test_a_v1_history_query_with_a_table_is_refused_as_its_schema_refuses_it() -> None:
    query = {"type": "query.history", "version": 1, "event_id": "q1", "player_id": "p1",
             "occurred_at": "2026-01-01T00:00:00Z", "correlation_id": "c1",
             "requester_id": "r1", "table_id": "eur-low"}  # fmt: skip
    with pytest.raises(ContractError) as refused:
        parse("queries", json.dumps(query).encode())
    assert refused.value.reason == Reason.INVALID and "table_id" in refused.value.detail
    v1 = json.loads((SCHEMAS / "query.history.v1.json").read_text())
    assert not validator(v1).is_valid(query)
    assert parse("queries", json.dumps({**query, "version": 2}).encode()).table_id == "eur-low"


def test_an_event_or_reply_ignores_a_field_it_does_not_know() -> None:
    # Our own log, re-read by mixed releases (ADR 032), and operators' consumers survive our
    # additions: a newer release's optional field is ignored, not refused (ADR 038).
    refused = {"type": "reply.refused", "version": 1, "event_id": "y1", "player_id": "p1",
               "occurred_at": "2026-01-01T00:00:00Z", "correlation_id": "c1",
               "requester_id": "r1", "query_type": "query.balance",
               "reason": "unknown_player", "added_later": 1}  # fmt: skip
    assert parse("replies", json.dumps(refused).encode()).reason == "unknown_player"


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
