"""Issue 29 defect 13: every JSON example of docs/operator-guide.md is a record the contracts
accept, and the guide's commands, sent in the guide's order through the in-memory wallet (its
eur-low table, a deposit, a bet, a promotional credit, a free-hand campaign), are accepted:
none is refused (the eur-low bet of aa_bonus 250 against chips 100/500/2500 was not_chips)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.wallet_app import wallet

from holdem.core.contracts import parse

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "operator-guide.md"
ROLES = {"command": "commands", "admin": "admin", "query": "queries", "reply": "replies",
         "round": "rounds", "wallet": "wallet", "table": "tables"}  # fmt: skip


def examples() -> list[dict[str, Any]]:
    """The guide's examples: each JSON line of a ```json block."""
    blocks = re.findall(r"```json\n(.*?)```", GUIDE.read_text(), flags=re.S)
    found = [json.loads(line) for block in blocks for line in block.splitlines() if line.strip()]
    assert len(found) >= 30, len(found)
    return found


def example(kind: str, **match: Any) -> bytes:
    [found] = [e for e in examples() if e["type"] == kind and match.items() <= e.items()]
    return json.dumps(found).encode()


@pytest.mark.parametrize("record", examples(), ids=lambda e: f"{e['type']}-v{e['version']}")
def test_every_example_is_a_record_the_contracts_accept(record: dict[str, Any]) -> None:
    role = ROLES[record["type"].split(".")[0]]
    parsed = parse(role, json.dumps(record))
    # an older version reads as its type's newest (ADR 032)
    assert parsed.type == record["type"] and parsed.version >= record["version"]


async def test_the_guides_commands_are_accepted_in_the_guides_order() -> None:
    key = b"p-1001"
    async with wallet() as w:
        await w.send("admin", example("admin.create_table"), key=b"eur-low")
        await w.send("commands", example("command.deposit"), key=key)
        await w.send("commands", example("command.place_bet", version=2), key=key)
        await w.send("commands", example("command.credit_promo"), key=key)
        await w.send("commands", example("command.grant_free_hands"), key=key)
    refused = [m for role in ("wallet", "rounds", "rejected", "tables") for m in w.messages(role)
               if "rejected" in m.type]  # fmt: skip
    assert not refused, [(m.type, m.reason, m.detail) for m in refused]
    types = w.types("wallet")
    for expected in ("wallet.deposited", "wallet.stake_taken", "wallet.promo_credited",
                     "wallet.free_hands_granted"):  # fmt: skip
        assert expected in types, types
    assert "round.bet_placed" in w.types("rounds")
