"""The live auditor's principal (issue 31 item 4): least privilege in the ACL plan."""

from __future__ import annotations

from holdem.core.wire.topics import Topics
from holdem.ops import acl

PREFIX = "test-abc"
TOPICS = Topics().with_prefix(PREFIX)
FINDINGS = f"{PREFIX}.holdem.audit.findings"


def mine(rules: list[acl.Acl]) -> set[tuple[str, str, str, str]]:
    return {
        (r.resource, r.operation, r.name, r.pattern) for r in rules if r.principal == "User:auditor"
    }


def test_the_auditor_reads_the_game_but_the_vault_and_the_admins_and_writes_only_its_findings() -> (
    None
):
    rules = mine(acl.plan(PREFIX))
    reads = {n for kind, op, n, _ in rules if kind == "TOPIC" and op == "READ"}
    writes = {n for kind, op, n, _ in rules if kind == "TOPIC" and op == "WRITE"}
    game = {TOPICS.commands, TOPICS.rounds, TOPICS.wallet, TOPICS.rejected, TOPICS.queries}
    assert reads == {*game, TOPICS.replies, TOPICS.tables, FINDINGS}
    assert TOPICS.vault not in reads and TOPICS.admin not in reads
    assert writes == {FINDINGS}
    assert {(k, op, n, p) for k, op, n, p in rules if k != "TOPIC"} == {
        ("GROUP", "READ", f"{PREFIX}.holdem-auditor", "LITERAL")
    }
    assert all(p == "LITERAL" for *_, p in rules)


def test_with_a_seamless_wallet_it_reads_the_operators_replies_too() -> None:
    reads = {n for k, op, n, _ in mine(acl.plan(PREFIX, seamless=True)) if op == "READ"}
    assert TOPICS.seamless_replies in reads
    assert TOPICS.seamless_replies not in {n for *_, n, _ in mine(acl.plan(PREFIX))}


def test_it_is_a_principal_a_storage_formatted_before_it_may_lack() -> None:
    assert "auditor" in acl.PRINCIPALS and "auditor" in acl.LATER_PRINCIPALS
