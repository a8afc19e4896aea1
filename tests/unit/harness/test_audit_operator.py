"""The audit's operator check (ADR 021): every record a service wrote names the deployment's
operator; records written from outside (commands, queries, admin, the operator's wallet) may
omit it."""

from __future__ import annotations

from support.messages import command, envelope

from holdem.core.contracts import Call, Malfunction, dump
from holdem.harness.audit import Record, check, operator_violations

MALFUNCTION = Malfunction(**envelope("p1", round_id="r1"), source="test", reason="x")


def record(role: str, offset: int, headers: list[tuple[str, bytes]]) -> Record:
    raw = dump(command(Call, round_id="r1")) if role == "commands" else dump(MALFUNCTION)
    return Record.of(role, 0, offset, raw, offset, headers)


def test_records_of_the_deployments_operator_pass() -> None:
    records = [
        record("rounds", 0, [("type", b"round.malfunction"), ("operator", b"acme")]),
        record("rounds", 1, [("operator", b"acme"), ("brand", b"acme-eu")]),
        record("commands", 0, []),  # an old client's command: no header, accepted
    ]
    assert operator_violations(records, "acme") == []


def test_a_service_record_without_or_with_another_operator_is_a_violation() -> None:
    records = [
        record("rounds", 0, []),
        record("wallet", 3, [("operator", b"other")]),
        record("rejected", 5, [("operator", b"acme"), ("brand", b"no spaces")]),
    ]
    assert operator_violations(records, "acme") == [
        "rejected[0]@5: header 'brand' is not a brand id: 'no spaces'",
        "rounds[0]@0: operator header None, not 'acme'",
        "wallet[0]@3: operator header 'other', not 'acme'",
    ]


def test_check_reports_the_operator_only_when_asked() -> None:
    records = [record("rounds", 0, [])]
    assert check(records, require_ended=False).ok
    report = check(records, require_ended=False, operator="acme")
    assert report.violations == ["rounds[0]@0: operator header None, not 'acme'"]
