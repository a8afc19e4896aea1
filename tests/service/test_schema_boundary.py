"""The boundary refuses what the published JSON Schemas refuse (issue 29 defect 1).

For every command, admin command and query schema in docs/contracts/schemas (older versions'
files too), a valid example is mutated field by field against the keywords its schema states
(tests/support/schema_mutations.py: format, bounds, lengths, pattern, enum, const, type,
required, additionalProperties; a mutation counts only if the schema refuses it). Every one of
these schemas refuses unknown fields (ADR 038), so each gets a misspelled field, which must be
refused naming it. Each mutated record is sent to the service that answers for it, running on
the in-memory transport: it must answer exactly one dead letter, ``invalid``, and publish
nothing else (no ``processing_failed``, no malfunction, no money movement, no reply)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.dealer import VAULT_KEYS
from support.memory import Log, started
from support.schema_mutations import Mutation, mutations, validator

from holdem.core.contracts import COMMAND_OWNERS, MessageRejected, parse
from holdem.dealer.app import create_app as dealer_app
from holdem.dealer.settings import DealerSettings
from holdem.query.app import create_app as query_app
from holdem.query.settings import QuerySettings
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport
from holdem.wallet.app import create_app as wallet_app
from holdem.wallet.settings import WalletSettings

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "contracts" / "schemas"
PUBLISHED = sorted(
    path.name
    for path in SCHEMAS.glob("*.json")
    if path.name.startswith(("command.", "admin.", "query."))
)
AT = "2026-12-04T21:46:30Z"
ENVELOPE = {"event_id": "e-1", "player_id": "p1", "occurred_at": AT, "causation_id": "x-1"}
COMMAND = {**ENVELOPE, "command_id": "c-1", "correlation_id": "k-1"}
QUERY = {**ENVELOPE, "correlation_id": "k-1", "requester_id": "lobby-1"}
MONEY = {"currency": "EUR", "amount": 2_500}
# An admin command is the table's (keyed by table_id), not a player's.
ADMIN = {"event_id": "e-1", "table_id": "t-1", "occurred_at": AT, "command_id": "c-1"}
ADMIN |= {"causation_id": "x-1", "correlation_id": "k-1"}
TERMS = {
    "operator_id": "op-1",
    "currency": "EUR",
    "ante_min": 100,
    "ante_max": 10_000,
    "bonus_max": 5_000,
    "chips": [100, 500, 2_500],
    "off_chips": "reject",
    "decision_timeout_s": 30,
    "timeout_policy": "fold",
    "idle_timeout_s": 900,
    "mode": "real",
    "pay_table": "standard-1",
    "history_length": 10,
}
# One valid body per type, with its optional fields present so that they are mutated too.
EXAMPLES: dict[str, dict[str, Any]] = {
    "admin.change_table": {**ADMIN, "expected_version": 1, "terms": TERMS},
    "admin.close_table": {**ADMIN, "expected_version": 1},
    "admin.create_table": {**ADMIN, "terms": TERMS},
    "command.acknowledge_reality_check": {**COMMAND, "table_id": "t-1", "round_id": "r-1"},
    "command.block_player": {**COMMAND, "reason": "self-exclusion"},
    "command.call": {**COMMAND, "round_id": "r-1"},
    "command.cancel_free_hands": {**COMMAND, "campaign_id": "welcome"},
    "command.credit_promo": {**COMMAND, **MONEY, "campaign_id": "welcome", "reason": "goodwill"},
    "command.deposit": {**COMMAND, **MONEY, "mode": "real"},
    "command.end_session": {**COMMAND, "table_id": "t-1", "reason": "terminated"},
    "command.fold": {**COMMAND, "round_id": "r-1"},
    "command.force_next_deck": {**COMMAND, "cards": ["As", "Ks"]},
    "command.grant_free_hands": {
        **COMMAND,
        "campaign_id": "welcome",
        "table_id": "t-1",
        "hands": 3,
        "ante": 1_000,
        "aa_bonus": 0,
        "expires_at": "2026-12-31T00:00:00Z",
    },
    "command.grant_fun": {**COMMAND, **MONEY},
    "command.place_bet": {
        **COMMAND,
        "round_id": "r-1",
        "currency": "EUR",
        "ante": 1_000,
        "aa_bonus": 500,
        "mode": "real",
        "table_id": "t-1",
    },
    "command.play_free_hand": {**COMMAND, "round_id": "r-1", "campaign_id": "welcome"},
    "command.rebet": {**COMMAND, "round_id": "r-1", "table_id": "t-1"},
    "command.reset_fun": {**COMMAND, **MONEY},
    "command.set_limits": {
        **COMMAND,
        "limits": {
            "currency": "EUR",
            "wager_per_day": 100_000,
            "loss_per_day": 50_000,
            "session_length_s": 3_600,
            "reality_check_s": 600,
        },
    },
    "command.unblock_player": {**COMMAND},
    "command.void_round": {**COMMAND, "round_id": "r-1", "reason": "operator"},
    "command.withdraw": {**COMMAND, **MONEY, "mode": "real"},
    "query.balance": {**QUERY},
    "query.history": {**QUERY, "limit": 5, "mode": "real", "table_id": "t-1"},
    "query.open_round": {**QUERY},
    "query.promotions": {**QUERY},
    "query.protection": {**QUERY},
    "query.round_summary": {**QUERY, "round_id": "r-1", "lang": "en"},
}


def example(schema: dict[str, Any]) -> dict[str, Any]:
    """The type's example as this schema version has it: its fields only, its version."""
    kind = schema["properties"]["type"]["const"]
    version = schema["properties"]["version"].get(
        "const", schema["properties"]["version"].get("default")
    )
    fields = {k: v for k, v in EXAMPLES[kind].items() if k in schema["properties"]}
    return {**fields, "type": kind, "version": version}


def owner(kind: str) -> str:
    if kind.startswith("query."):
        return "query"
    if kind.startswith("admin."):
        return "wallet"  # it keeps the table book (ADR 018)
    return next(name for name, kinds in COMMAND_OWNERS.items() if kind in kinds)


def role_and_key(kind: str) -> tuple[str, bytes]:
    """The topic a body of type ``kind`` is sent on, and the record key it must carry."""
    if kind.startswith("admin."):
        return "admin", b"t-1"
    return ("queries" if kind.startswith("query.") else "commands"), b"p1"


def service(name: str, transport: MemoryTransport) -> ServiceApp:
    registry = CollectorRegistry()
    if name == "wallet":
        return wallet_app(WalletSettings(metrics_port=0), transport=transport, registry=registry)
    if name == "dealer":
        settings = DealerSettings(metrics_port=0, dealer_vault_keys=VAULT_KEYS)
        return dealer_app(settings, transport=transport, registry=registry)
    return query_app(QuerySettings(metrics_port=0), transport=transport, registry=registry)


@asynccontextmanager
async def running(name: str) -> AsyncIterator[Log]:
    transport = MemoryTransport()
    async with started(service(name, transport), transport) as log:
        yield log


def committed(log: Log) -> dict[str, int]:
    """How many records each topic the service writes holds."""
    roles = {*log.service.processor.spec.outputs, "rejected"}
    return {log.topic(role): len(log.records(role)) for role in roles}


async def answers(
    log: Log, role: str, body: dict[str, Any], key: bytes
) -> tuple[dict[str, int], list[Any]]:
    """What one record caused: the new record count per topic, and its dead letters."""
    before = committed(log)
    rejected_before = len(log.values("rejected"))
    await log.publish(role, json.dumps(body).encode(), key=key)
    after = committed(log)
    grown = {topic: after[topic] - before.get(topic, 0) for topic in after}
    letters = [parse("rejected", raw) for raw in log.values("rejected")[rejected_before:]]
    return {topic: n for topic, n in grown.items() if n}, letters


def test_every_command_and_query_type_has_an_example_and_a_published_schema() -> None:
    kinds = {
        json.loads((SCHEMAS / name).read_text())["properties"]["type"]["const"]
        for name in PUBLISHED
    }
    assert kinds == set(EXAMPLES)


@pytest.mark.parametrize("name", PUBLISHED)
async def test_what_the_schema_refuses_is_refused_invalid_and_nothing_else(name: str) -> None:
    schema = json.loads((SCHEMAS / name).read_text())
    valid = example(schema)
    kind = valid["type"]
    found = mutations(schema, valid)
    keywords = {m.keyword for m in found}
    # Every schema states at least ids (pattern, lengths), a time (format), required fields, and
    # that it refuses a field it does not declare (ADR 038).
    assert {"required", "format", "pattern", "minLength", "maxLength", "type"} <= keywords
    assert schema.get("additionalProperties") is False, f"{name} allows unknown fields"
    assert "additionalProperties" in keywords
    role, key = role_and_key(kind)
    wrong: list[str] = []
    async with running(owner(kind)) as log:
        rejected_topic = log.topic("rejected")
        for mutation in found:
            grown, letters = await answers(log, role, mutation.body, key)
            reasons = [
                (m.service, m.reason.value) for m in letters if isinstance(m, MessageRejected)
            ]
            unnamed = mutation.keyword == "additionalProperties" and not all(
                mutation.path[-1] in m.detail for m in letters if isinstance(m, MessageRejected)
            )
            if grown != {rejected_topic: 1} or reasons != [(owner(kind), "invalid")] or unnamed:
                wrong.append(f"{mutation.name} {_shown(mutation)}: {grown} {reasons}")
        # The unmutated example passes the boundary (whatever the service then decides of it).
        _, letters = await answers(log, role, valid, key)
    assert not wrong, f"{len(wrong)} of {len(found)} not refused invalid alone:\n" + "\n".join(
        wrong
    )
    assert letters == [], f"the valid example was dead-lettered: {letters}"
    assert validator(schema).is_valid(valid)


def _shown(mutation: Mutation) -> str:
    value: Any = mutation.body
    for part in mutation.path:
        if not isinstance(value, dict) or part not in value:
            return "(absent)"
        value = value[part]
    return repr(value)[:40]
