"""The operator's guide (docs/operator-guide.md) stays true to the contracts (issue 18 item 4):
every JSON example parses as the message it shows, and every list of reason codes is the
contracts' enum, no more, no less."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import Path

import pytest

from holdem.core.contracts import Reason, RecordReason, parse
from holdem.core.contracts.base import OperatorRefusal, ProtectionRefusal
from holdem.core.contracts.forced import ForceRefusal
from holdem.core.contracts.promotions import PromoReason
from holdem.core.contracts.protection import ProtectionRejection
from holdem.core.contracts.queries import QueryReason
from holdem.core.contracts.seamless import DebitRejection, ReplyRefusal
from holdem.core.contracts.sessions import SessionRefusal

ROOT = Path(__file__).resolve().parents[3]
GUIDE = (ROOT / "docs" / "operator-guide.md").read_text()
# The topic role of a message, by its type's first word.
ROLE = {
    "command": "commands",
    "admin": "admin",
    "query": "queries",
    "reply": "replies",
    "table": "tables",
    "round": "rounds",
    "wallet": "wallet",
    "vault": "vault",
    "rejected": "rejected",
}
EXAMPLES = re.findall(r"```json\n(.*?)\n```", GUIDE, re.DOTALL)
CODE = re.compile(r"`([a-z_]+)`")
FIELDS = {"detail"}  # a field the reasons' column names, not a code


def section(number: int) -> str:
    start = GUIDE.index(f"\n## {number}. ")
    end = GUIDE.find("\n## ", start + 1)
    return GUIDE[start : end if end != -1 else None]


def between(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i : text.index(end, i)]


def test_the_guide_has_an_example_of_every_query_and_reply() -> None:
    types = {json.loads(e)["type"] for e in EXAMPLES}
    queries = {"query.open_round", "query.balance", "query.history", "query.round_summary"}
    queries |= {"query.promotions", "query.protection"}  # issue 29
    replies = {t.replace("query.", "reply.") for t in queries} | {"reply.refused"}
    assert queries | replies <= types, sorted(queries | replies - types)


@pytest.mark.parametrize("example", EXAMPLES, ids=[json.loads(e)["type"] for e in EXAMPLES])
def test_every_json_example_parses_as_the_message_it_shows(example: str) -> None:
    body = json.loads(example)
    message = parse(ROLE[body["type"].split(".")[0]], example.encode())
    assert message.type == body["type"]
    # an older version is read as the newest it upcasts to (ADR 032)
    older = getattr(type(message), "UPCASTS", {})
    assert message.version == body["version"] or body["version"] in older  # type: ignore[attr-defined]


def test_the_query_refusals_are_the_contracts() -> None:
    text = between(section(11), "gets `reply.refused` with a `reason`", "An unreadable query")
    assert set(re.findall(r"`([a-z_]+)`\s*\(", text)) == {r.value for r in QueryReason}


def test_the_rejections_table_lists_every_reason_the_contracts_have() -> None:
    rows = [line.split("|") for line in section(5).splitlines() if line.startswith("| `")]
    listed = {code for row in rows for code in CODE.findall(row[4])} - FIELDS
    enums: tuple[type[StrEnum], ...] = (Reason, RecordReason, OperatorRefusal, SessionRefusal)
    enums += (ProtectionRefusal, ProtectionRejection)  # ADR 028
    enums += (ForceRefusal,)  # ADR 030
    contracts = {r.value for e in enums for r in e}
    assert listed == contracts, (sorted(listed - contracts), sorted(contracts - listed))
    by_type = {row[1].strip().strip("`"): set(CODE.findall(row[4])) for row in rows}
    assert by_type["round.session_rejected"] == {r.value for r in SessionRefusal}
    assert by_type["wallet.protection_rejected"] == {r.value for r in ProtectionRejection}
    assert by_type["round.deck_force_rejected"] == {r.value for r in ForceRefusal}
    dealer = (ROOT / "services/dealer/src/holdem/dealer/decide.py").read_text()
    said = {Reason[name].value for name in re.findall(r"Reason\.([A-Z_]+)", dealer)}
    assert by_type["round.command_rejected"] == said


def test_the_seamless_reasons_are_the_contracts() -> None:
    debit = between(section(12), "`seamless.debit_rejected` with a `reason`:", "The player's")
    debit = debit.removeprefix("`seamless.debit_rejected` with a `reason`:")
    assert set(CODE.findall(debit)) == {r.value for r in DebitRejection}
    refused = between(section(12), "`seamless.reply_refused` (`reason`:", "on `holdem.wallet`")
    refused = refused.removeprefix("`seamless.reply_refused` (`reason`:")
    assert set(CODE.findall(refused)) == {r.value for r in ReplyRefusal}


def test_the_promotion_reasons_are_the_contracts() -> None:
    rows = [line.split("|") for line in section(16).splitlines() if line.startswith("| `")]
    assert {row[1].strip().strip("`") for row in rows} == {r.value for r in PromoReason}
    # A free hand's checks: the campaign's (promotions.py) and the bet pipeline's last step,
    # the call held from the player's balance (bets.py: its only reason).
    wallet = "".join(
        (ROOT / "services/wallet/src/holdem/wallet" / name).read_text()
        for name in ("promotions.py", "bets.py")
    )
    said = {Reason[name].value for name in re.findall(r"(?<!Promo)Reason\.([A-Z_]+)", wallet)}
    said |= {Reason.DUPLICATE.value, Reason.INVALID.value}  # the command-id checks' own
    listed = set(CODE.findall(between(section(16), "codes that apply", "promotion code")))
    assert listed == said, (sorted(listed - said), sorted(said - listed))
