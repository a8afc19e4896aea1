"""The least-privilege ACL set of the game's principals, printed or applied as admin."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.protocol.admin import (
    CreateAclsRequest_v1,
    DescribeAclsRequest_v1,
)
from aiokafka.protocol.api import Request

from holdem.core.topology import (
    BACKOFFICE,
    OPERATOR,
    PROCESS,
    SEAMLESS_BACKOFFICE,
    SEAMLESS_OPERATOR,
    SYSTEM,
    Party,
)
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import ROLES, Topics, snapshot_topic


@dataclass(frozen=True)
class Access:
    """A service's topic roles, from the topology (holdem.core.topology, which every Spec is
    checked against: tests/unit/test_topology.py)."""

    inputs: tuple[str, ...]  # consumed by its group
    state_roles: tuple[str, ...]  # replayed (group-less reads): its state and its book
    outputs: tuple[str, ...]  # published in its transactions, besides "rejected"

    @classmethod
    def of(cls, party: Party) -> Access:
        return cls(party.reads, (*party.folds, *party.book), party.writes)


SERVICES: dict[str, Access] = {
    name: Access.of(party) for name, party in SYSTEM.items() if PROCESS[name] == name
}
# A seamless-mode wallet (ADR 015) also reads the operator's replies (an input); its requests
# are on its own topic, which the operator reads already. The operator writes the replies.
SEAMLESS_WALLET = Access.of(SYSTEM["wallet-seamless"])
OPERATOR_WRITES = OPERATOR.writes
SEAMLESS_OPERATOR_WRITES = tuple(r for r in SEAMLESS_OPERATOR.writes if r not in OPERATOR.writes)
OPERATOR_READS = OPERATOR.reads
OPERATOR_GROUP = "holdem-operator"  # the operator's consumer groups start with this (prefixed)
# The back office's projection (holdem.backoffice.project, ADR 026) reads these whole: it assigns
# their partitions itself and keeps its positions in PostgreSQL, so it needs no group, writes
# nothing, and never sees the vault or the commands. The seamless replies (a topic it skips when
# it may not read it) only where the wallet is seamless, like the wallet's own read of them.
BACKOFFICE_READS = BACKOFFICE.reads
SEAMLESS_BACKOFFICE_READS = tuple(r for r in SEAMLESS_BACKOFFICE.reads if r not in BACKOFFICE.reads)
# The live auditor (holdem.harness.auditor_service, issue 31): reads the game's topics but the
# vault (the dealer's secret) and the admin's table commands (their answers are audited), keeps
# its positions in its own group, and reads and writes only its findings topic.
AUDITOR_READS = tuple(r for r in ROLES if r not in ("vault", "admin"))
AUDITOR_GROUP = "holdem-auditor"
FINDINGS = "holdem.audit.findings"
PRINCIPALS = ("admin", *SERVICES, "operator", "backoffice", "auditor")  # admin: super user, no ACL
# Principals a broker storage formatted before they existed lacks (SCRAM users are written at
# format time): their env file may be missing; `make serve WIPE=1` makes a storage with them.
LATER_PRINCIPALS = ("backoffice", "auditor")

# Kafka's wire codes (org.apache.kafka.common.resource / acl).
RESOURCE = {"TOPIC": 2, "GROUP": 3, "CLUSTER": 4, "TRANSACTIONAL_ID": 5}
PATTERN = {"ANY": 1, "LITERAL": 3, "PREFIXED": 4}
OPERATION = {"ANY": 1, "READ": 3, "WRITE": 4, "DESCRIBE": 8}
ALLOW = 3
ANY_PERMISSION = 1
ANY_RESOURCE = 1


@dataclass(frozen=True, order=True)
class Acl:
    """One ALLOW rule: ``principal`` may ``operation`` on ``resource`` ``name`` (``pattern``)."""

    principal: str
    resource: str
    name: str
    pattern: str
    operation: str


def findings_topic(topics: Topics) -> str:
    """``[prefix.]holdem.audit.findings``: the live auditor's findings, keyed by their SHA-256.

    >>> findings_topic(Topics().with_prefix("t1")), findings_topic(Topics())
    ('t1.holdem.audit.findings', 'holdem.audit.findings')
    """
    return f"{topics.prefix}.{FINDINGS}" if topics.prefix else FINDINGS


class AclError(RuntimeError):
    """The broker refused to create or describe ACLs (not admin? no authorizer?)."""


def plan(prefix: str = "", *, seamless: bool = False) -> list[Acl]:
    """Every ACL the game needs under topic ``prefix`` (``""`` = the default topic names);
    ``seamless``: the wallet bridges to the operator's wallet (HOLDEM_WALLET_MODE=seamless).

    >>> rules = plan()
    >>> Acl("User:operator", "TOPIC", "holdem.commands", "LITERAL", "WRITE") in rules
    True
    >>> sorted({a.principal for a in rules if a.name == "holdem.dealer.vault"})
    ['User:dealer']
    >>> sorted({a.operation for a in plan(seamless=True) if a.name == "holdem.seamless.replies"
    ...         and a.principal == "User:operator"})
    ['WRITE']
    """
    topics = Topics().with_prefix(prefix) if prefix else Topics()
    scope = f"{prefix}." if prefix else ""
    rules: set[Acl] = set()

    def allow(who: str, resource: str, name: str, operation: str, pattern: str = "LITERAL") -> None:
        rules.add(Acl(f"User:{who}", resource, name, pattern, operation))

    services = {**SERVICES, "wallet": SEAMLESS_WALLET} if seamless else SERVICES
    for name, access in services.items():
        for role in {*access.inputs, *access.state_roles}:
            allow(name, "TOPIC", getattr(topics, role), "READ")
        for role in {*access.outputs, "rejected"}:
            allow(name, "TOPIC", getattr(topics, role), "WRITE")
        # Its own snapshot topic, read at an assignment and written in its transactions.
        allow(name, "TOPIC", snapshot_topic(topics, name), "READ")
        allow(name, "TOPIC", snapshot_topic(topics, name), "WRITE")
        # The runtime's names: group {scope}holdem-{name}, transactional id ...-{instance}.
        allow(name, "GROUP", f"{scope}holdem-{name}", "READ")
        allow(name, "TRANSACTIONAL_ID", f"{scope}holdem-{name}-", "WRITE", "PREFIXED")
    writes = (*OPERATOR_WRITES, *SEAMLESS_OPERATOR_WRITES) if seamless else OPERATOR_WRITES
    for role in writes:
        allow("operator", "TOPIC", getattr(topics, role), "WRITE")
    for role in OPERATOR_READS:
        allow("operator", "TOPIC", getattr(topics, role), "READ")
    allow("operator", "GROUP", f"{scope}{OPERATOR_GROUP}", "READ", "PREFIXED")
    for role in (*BACKOFFICE_READS, *SEAMLESS_BACKOFFICE_READS) if seamless else BACKOFFICE_READS:
        allow("backoffice", "TOPIC", getattr(topics, role), "READ")
    for role in AUDITOR_READS:
        if role != "seamless_replies" or seamless:
            allow("auditor", "TOPIC", getattr(topics, role), "READ")
    allow("auditor", "TOPIC", findings_topic(topics), "READ")
    allow("auditor", "TOPIC", findings_topic(topics), "WRITE")
    allow("auditor", "GROUP", f"{scope}{AUDITOR_GROUP}", "READ")
    return sorted(rules)


def table(rules: Iterable[Acl]) -> str:
    """A plain-text table, one rule a line."""
    rows = [("PRINCIPAL", "OPERATION", "RESOURCE", "PATTERN", "NAME")]
    rows += [(a.principal, a.operation, a.resource, a.pattern, a.name) for a in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[4]])
        for row in rows
    )


class _CreateAcls(Request[CreateAclsRequest_v1]):  # type: ignore[misc]
    """CreateAcls with many creations in one request (aiokafka's builds one)."""

    API_KEY = 30

    def __init__(self, rules: Sequence[Acl]) -> None:
        self._rules = rules

    def build(self, request_struct_class: type[CreateAclsRequest_v1]) -> CreateAclsRequest_v1:
        return request_struct_class(
            [
                (
                    RESOURCE[a.resource],
                    a.name,
                    PATTERN[a.pattern],
                    a.principal,
                    "*",
                    OPERATION[a.operation],
                    ALLOW,
                )
                for a in self._rules
            ]
        )


class _DescribeAllAcls(Request[DescribeAclsRequest_v1]):  # type: ignore[misc]
    """DescribeAcls matching every rule."""

    API_KEY = 29

    def build(self, request_struct_class: type[DescribeAclsRequest_v1]) -> DescribeAclsRequest_v1:
        return request_struct_class(
            ANY_RESOURCE, None, PATTERN["ANY"], None, None, OPERATION["ANY"], ANY_PERMISSION
        )


async def apply(
    connection: KafkaConnection, rules: Sequence[Acl], *, in_force_within: float = 30.0
) -> None:
    """Create ``rules`` on the cluster (idempotent: an existing rule is accepted again) and return
    once every broker enforces them.

    The controller answers CreateAcls when it has committed the rules; each broker's authorizer
    applies them when it has fetched that part of the metadata log, a moment later (two processes
    in the compose stack and its image). A client authorized in that moment was refused: the
    brokers answer DescribeAcls from their own authorizer, so each is asked until it holds them
    all (AclError after ``in_force_within`` seconds).
    """
    admin = AIOKafkaAdminClient(**connection.kwargs(), request_timeout_ms=30_000)
    await admin.start()
    try:
        response = await admin._send_request(_CreateAcls(rules))
        failed = [
            f"{rule}: {code} {message}"
            for rule, (code, message) in zip(rules, response.creation_responses, strict=True)
            if code != 0
        ]
        if failed:
            raise AclError("ACLs refused:\n  " + "\n  ".join(failed))
        nodes = [broker.nodeId for broker in admin._client.cluster.brokers()]

        async def held_by(node: int) -> set[Acl]:
            return set(_rules_of(await admin._send_request(_DescribeAllAcls(), node)))

        await until_in_force(held_by, nodes, rules, within=in_force_within)
    finally:
        await admin.close()


async def until_in_force(
    held_by: Callable[[int], Awaitable[set[Acl]]],
    nodes: Sequence[int],
    rules: Sequence[Acl],
    *,
    within: float,
    pause: float = 0.05,
) -> None:
    """Return when every node in ``nodes`` holds every rule of ``rules``; AclError after
    ``within`` seconds naming the nodes and a rule still missing."""
    wanted = set(rules)
    waiting = set(nodes)
    deadline = asyncio.get_running_loop().time() + within
    while True:
        missing = {node: wanted - await held_by(node) for node in sorted(waiting)}
        waiting = {node for node, rules_missing in missing.items() if rules_missing}
        if not waiting:
            return
        if asyncio.get_running_loop().time() >= deadline:
            node = min(waiting)
            raise AclError(
                f"ACLs created but not in force after {within:g} s on broker(s) "
                f"{sorted(waiting)}: {len(missing[node])} missing on {node}, "
                f"e.g. {min(missing[node])}"
            )
        await asyncio.sleep(pause)


def _rules_of(response: object) -> list[Acl]:
    """The ALLOW rules of a DescribeAcls response (AclError if the broker refused)."""
    error_code = getattr(response, "error_code", 0)
    if error_code:
        raise AclError(f"DescribeAcls: {error_code} {getattr(response, 'error_message', '')}")
    names = {code: name for name, code in RESOURCE.items()}
    patterns = {code: name for name, code in PATTERN.items()}
    operations = {code: name for name, code in OPERATION.items()}
    return sorted(
        Acl(principal, names.get(kind, str(kind)), name, patterns.get(pattern, str(pattern)), op)
        for kind, name, pattern, entries in getattr(response, "resources", ())
        for principal, _host, code, permission in entries
        if permission == ALLOW
        for op in [operations.get(code, str(code))]
    )


async def describe(connection: KafkaConnection) -> list[Acl]:
    """Every ALLOW rule the cluster holds (as one broker's authorizer holds them)."""
    admin = AIOKafkaAdminClient(**connection.kwargs(), request_timeout_ms=30_000)
    await admin.start()
    try:
        response = await admin._send_request(_DescribeAllAcls())
    finally:
        await admin.close()
    return _rules_of(response)


def main(argv: list[str] | None = None) -> int:
    """`python -m holdem.ops.acl plan|apply`: print the ACL set, or apply it as admin."""
    parser = argparse.ArgumentParser(prog="python -m holdem.ops.acl", description=main.__doc__)
    parser.add_argument("action", choices=("plan", "apply", "show"))
    parser.add_argument("--prefix", default="", help="topic prefix (tests, tenants)")
    parser.add_argument("--json", action="store_true", help="JSON instead of a table")
    parser.add_argument(
        "--seamless", action="store_true", help="the wallet bridges to the operator's wallet"
    )
    parser.add_argument("--env", help="admin's env file (else the HOLDEM_KAFKA_* environment)")
    args = parser.parse_args(argv)
    rules = plan(args.prefix, seamless=args.seamless)
    if args.action != "plan":
        connection = KafkaConnection.from_file(args.env) if args.env else KafkaConnection.from_env()
        if args.action == "apply":
            asyncio.run(apply(connection, rules))
        else:
            rules = asyncio.run(describe(connection))
    if args.json:
        print(json.dumps([asdict(rule) for rule in rules], indent=2))
    else:
        print(table(rules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
