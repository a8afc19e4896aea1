"""The system's topology: which topic roles each party reads, folds and writes. One table,
as eventsourcing's ``System`` lists its process applications: every service's Spec is checked
against it (tests/unit/test_topology.py), the ACL plan (holdem.ops.acl) is derived from it, and
``scripts/render_topology.py`` writes it into docs/services-design.md.

>>> SYSTEM["settlement"].writes
('rounds',)
>>> sorted(role for role in SYSTEM["dealer"].reads)
['commands', 'rounds']
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Party:
    """One party's topic roles. A service reads its inputs in its consumer group, replays its
    folded roles and its book (every partition, group-less) and publishes its writes (a
    service also writes "rejected", its dead letters, and its own snapshot topic)."""

    reads: tuple[str, ...]  # consumed, decided on (a service's Spec.inputs)
    folds: tuple[str, ...] = ()  # folded into each partition's state (Spec.state_roles)
    book: tuple[str, ...] = ()  # read whole into one book (Spec.book_roles)
    writes: tuple[str, ...] = ()  # published (Spec.outputs)
    note: str = ""  # what the docs say of it


_WALLET = Party(
    reads=("commands", "rounds", "admin"),
    folds=("wallet", "rounds"),
    book=("tables",),
    writes=("rounds", "wallet", "tables"),
    note="owns the players' money and the table book; answers the bets and the admin's tables",
)
# The services, as their Specs declare them.
SYSTEM: dict[str, Party] = {
    "dealer": Party(
        reads=("commands", "rounds"),
        # commands: the bets sent, so a decision right behind its bet is known early (ADR 024)
        folds=("rounds", "vault", "commands"),
        book=("tables",),
        writes=("rounds", "vault"),
        note="deals the rounds, seals each deck in its vault, answers Call, Fold, VoidRound",
    ),
    "wallet": _WALLET,
    # HOLDEM_WALLET_MODE=seamless (ADR 015): also the operator's wallet's answers; its requests
    # are on its own topic, which the operator reads already.
    "wallet-seamless": replace(
        _WALLET,
        reads=(*_WALLET.reads, "seamless_replies"),
        note="the wallet bridging to the operator's wallet",
    ),
    "settlement": Party(
        reads=("rounds",),
        folds=("rounds",),
        writes=("rounds",),
        note="settles each round from its record, voids what a malfunction broke",
    ),
    "query": Party(
        reads=("rounds", "wallet", "queries"),
        folds=("rounds", "wallet"),
        book=("tables",),  # each table's history length (ADR 016)
        writes=("replies",),
        note="answers the players' queries from the rounds and the ledger",
    ),
}
# Outside the services: the operator's SDK and the back office's projection (ADR 026).
OPERATOR = Party(
    reads=("rounds", "wallet", "rejected", "replies", "tables"),  # tables: their terms
    writes=("commands", "queries"),
    note="the operator (holdem.client): commands and queries in, events and replies out",
)
SEAMLESS_OPERATOR = replace(OPERATOR, writes=(*OPERATOR.writes, "seamless_replies"))
# Read whole, positions kept in PostgreSQL: no group, no write, never the vault or the commands.
BACKOFFICE = Party(
    reads=("rounds", "wallet", "tables"),
    note="the back office's projection into PostgreSQL (reads only)",
)
SEAMLESS_BACKOFFICE = replace(BACKOFFICE, reads=(*BACKOFFICE.reads, "seamless_replies"))
# The admin's table commands (ADR 018); its principal is Kafka's super user (no ACL of its own).
ADMIN = Party(
    reads=("tables",),
    writes=("admin",),
    note="the operator's admin: creates, changes and closes tables",
)
# The service whose process runs each entry of SYSTEM (its principal, group and snapshots).
PROCESS = {name: name.split("-")[0] for name in SYSTEM}
PARTIES: dict[str, Party] = {
    **SYSTEM,
    "operator": OPERATOR,
    "operator (seamless)": SEAMLESS_OPERATOR,
    "backoffice": BACKOFFICE,
    "backoffice (seamless)": SEAMLESS_BACKOFFICE,
    "admin": ADMIN,
}


def table() -> str:
    """The topology as a Markdown table (rendered into docs/services-design.md)."""

    def cell(roles: tuple[str, ...]) -> str:
        return ", ".join(roles) or "-"

    lines = [
        "| party | reads | folds | book | writes | |",
        "|---|---|---|---|---|---|",
    ]
    for name, party in PARTIES.items():
        writes = party.writes if name not in SYSTEM else (*party.writes, "rejected")
        lines.append(
            f"| {name} | {cell(party.reads)} | {cell(party.folds)} | {cell(party.book)} "
            f"| {cell(writes)} | {party.note} |"
        )
    return "\n".join(lines) + "\n"
