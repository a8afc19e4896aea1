"""round.bet_rejected v3 (the operator wallet's refusals), seamless.debit_requested v2 (the
table's idle timeout) and v3 (a free hand's campaign): the older versions still parse, the new
ones go through the wire."""

from __future__ import annotations

import json
from typing import Any

import pytest

from holdem.core.contracts import (
    BetRejected,
    ContractError,
    OperatorRefusal,
    ProtectionRefusal,
    Reason,
    dump,
    parse,
)
from holdem.core.contracts.seamless import DebitRequested
from holdem.core.contracts.tables import MAX_IDLE_TIMEOUT_S

ENVELOPE = {
    "event_id": "e1",
    "player_id": "p1",
    "round_id": "r1",
    "occurred_at": "2026-01-01T00:00:00Z",
}
REJECTED = {**ENVELOPE, "type": "round.bet_rejected", "command_id": "c1", "detail": "no"}
DEBIT = {
    **ENVELOPE,
    "type": "seamless.debit_requested",
    "tx_id": "t1",
    "currency": "EUR",
    "amount": 300,
    "ante": 100,
    "aa_bonus": 0,
    "call_hold": 200,
    "command_id": "c1",
    "requested_ante": 100,
    "requested_aa_bonus": 0,
    "fingerprint": "0" * 32,
    "expires_at": "2026-01-01T00:00:10Z",
    "table_id": "t1",
    "table_version": 1,
}


def wire(body: dict[str, Any], **changes: Any) -> bytes:
    return json.dumps({**body, **changes}).encode()


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        (1, Reason.INSUFFICIENT_FUNDS),
        (2, Reason.UNKNOWN_TABLE),
        (3, Reason.INSUFFICIENT_FUNDS),
        (4, Reason.INSUFFICIENT_FUNDS),
    ],
)
def test_every_bet_rejected_version_parses(version: int, reason: Reason) -> None:
    rejected = parse("rounds", wire(REJECTED, version=version, reason=reason.value))
    assert isinstance(rejected, BetRejected)
    assert (rejected.version, rejected.reason) == (version, reason)


@pytest.mark.parametrize("reason", [*OperatorRefusal, *Reason, *ProtectionRefusal])
def test_a_v4_bet_rejected_goes_through_the_wire_with_any_reason(
    reason: Reason | OperatorRefusal | ProtectionRefusal,
) -> None:
    sent = BetRejected.model_validate({**REJECTED, "reason": reason})
    assert sent.version == 4  # what the wallet writes (ADR 028)

    read = parse("rounds", dump(sent))

    assert read == sent and read.reason is reason
    assert json.loads(dump(sent))["reason"] == reason.value


def test_the_operator_refusals_are_codes_of_their_own() -> None:
    assert {r.value for r in OperatorRefusal} == {
        "limit_exceeded",
        "session_expired",
        "player_blocked",
        "operator_rejected",
    }
    assert not {r.value for r in OperatorRefusal} & {r.value for r in Reason}


@pytest.mark.parametrize(
    "changes", [{"version": 3, "reason": "bored"}, {"version": 5, "reason": "duplicate"}]
)
def test_a_bet_rejected_with_an_unknown_reason_or_version_is_invalid(
    changes: dict[str, Any],
) -> None:
    with pytest.raises(ContractError) as error:
        parse("rounds", wire(REJECTED, **changes))
    assert error.value.reason is Reason.INVALID


def test_a_v1_debit_requested_parses_without_an_idle_timeout() -> None:
    debit = parse("wallet", wire(DEBIT, version=1))
    assert isinstance(debit, DebitRequested)
    assert (debit.version, debit.idle_timeout_s, debit.table_id) == (1, None, "t1")


def test_a_v2_debit_requested_carries_the_idle_timeout_through_the_wire() -> None:
    sent = DebitRequested.model_validate({**DEBIT, "idle_timeout_s": 120})
    assert sent.version == 3  # v3 also names a free hand's campaign (ADR 029)

    read = parse("wallet", dump(sent))

    assert read == sent and read.idle_timeout_s == 120


@pytest.mark.parametrize("idle", [0, MAX_IDLE_TIMEOUT_S + 1, 1.5])
def test_an_idle_timeout_out_of_range_is_invalid(idle: object) -> None:
    with pytest.raises(ContractError) as error:
        parse("wallet", wire(DEBIT, version=2, idle_timeout_s=idle))
    assert error.value.reason is Reason.INVALID and "idle_timeout_s" in error.value.detail


def test_a_v3_debit_requested_names_a_free_hands_campaign_and_v2_names_none() -> None:
    free = parse("wallet", wire(DEBIT, version=3, amount=200, campaign_id="welcome"))
    paid = parse("wallet", wire(DEBIT, version=2))

    assert (free.version, free.amount, free.campaign_id) == (3, 200, "welcome")
    assert (paid.version, paid.campaign_id) == (2, None)
