"""``holdem audit`` (also ``holdem-audit``, ``python -m holdem.harness.audit_cli``): audit a
deployment's topics from the command line; exit 1 on any violation.

Connects as the ``HOLDEM_KAFKA_*`` variables (or ``--env-file``) say, on the topics of
``--prefix`` (default ``HOLDEM_TOPIC_PREFIX``). As ``admin`` it reads every topic, the vault
included; ``--operator`` reads only what the operator principal may read (rounds, wallet,
rejected, replies, tables), which leaves out the checks that need the commands or the vault.
Rounds still open are allowed unless ``--require-ended`` (a live deployment always has some).
Exit 0: no violation; 1: violations (printed, one per line); 2: the topics could not be read."""

from __future__ import annotations

import argparse
import asyncio
import sys

from aiokafka.errors import KafkaError

from holdem.core.wire.connection import ConnectionConfigError, KafkaConnection
from holdem.core.wire.topics import Topics, topics_from_env
from holdem.harness.audit import AuditReport, audit_run

# What the operator principal may read (holdem.ops.acl.OPERATOR_READS: the harness may not
# import the ACL planner's internals, the list is the guide's, section 1).
OPERATOR_ROLES = ("rounds", "wallet", "rejected", "replies", "tables")
SHOWN = 50  # violations printed; the count says how many there were


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="holdem audit", description=(__doc__ or "").split("\n\n")[0].replace("``", "")
    )
    p.add_argument("--env-file", help="HOLDEM_KAFKA_* file, e.g. DIR/clients/admin.env")
    p.add_argument("--prefix", help="topic prefix (default: HOLDEM_TOPIC_PREFIX, else none)")
    p.add_argument(
        "--operator",
        action="store_true",
        help="read only the topics the operator principal may read",
    )
    p.add_argument("--require-ended", action="store_true", help="a round still open is a violation")
    p.add_argument("--all", action="store_true", help="print every violation, not the first 50")
    return p


def report_lines(report: AuditReport, show: int | None = SHOWN) -> list[str]:
    lines = [
        f"{report.records} records, {report.rounds} rounds, {report.ended} ended"
        + (f", {report.forced} forced" if report.forced else "")
        + ": "
        + ("ok" if report.ok else f"{len(report.violations)} violations")
    ]
    shown = report.violations if show is None else report.violations[:show]
    lines += [f"  {v}" for v in shown]
    if len(shown) < len(report.violations):
        lines.append(f"  ... {len(report.violations) - len(shown)} more (--all)")
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        connection = (
            KafkaConnection.from_file(args.env_file)
            if args.env_file
            else KafkaConnection.from_env()
        )
    except (ConnectionConfigError, OSError) as error:
        print(f"holdem audit: {error}", file=sys.stderr)
        return 2
    topics = Topics().with_prefix(args.prefix) if args.prefix else topics_from_env()
    roles = OPERATOR_ROLES if args.operator else None
    try:
        report = asyncio.run(
            audit_run(connection, topics, require_ended=args.require_ended, roles=roles)
        )
    except (KafkaError, LookupError, TimeoutError) as error:
        print(f"holdem audit: cannot read the topics: {error!r}", file=sys.stderr)
        return 2
    print("\n".join(report_lines(report, None if args.all else SHOWN)))
    return 0 if report.ok else 1


audit_main = main  # holdem audit

if __name__ == "__main__":
    sys.exit(main())
