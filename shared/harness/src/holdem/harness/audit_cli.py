"""``holdem audit`` (also ``holdem-audit``, ``python -m holdem.harness.audit_cli``): audit a
deployment's topics from the command line; exit 1 on any violation.

Connects as the ``HOLDEM_KAFKA_*`` variables (or ``--env-file``) say, on the topics of
``--prefix`` (default ``HOLDEM_TOPIC_PREFIX``). As ``admin`` it reads every topic, the vault
included; ``--operator`` reads only what the operator principal may read (rounds, wallet,
rejected, replies, tables), which leaves out the checks that need the commands or the vault.
Rounds still open are allowed unless ``--require-ended`` (a live deployment always has some).

The audit streams (ADR 040): it reads the log once, in record time, and holds only what is still
open. ``--whole`` reads it all into memory first (the older path, the streaming one's oracle).
``--workers N`` splits the partitions between N processes through a Kafka consumer group and
merges their results; across machines, start one ``--group G --members N --out FILE`` per
machine and ``--merge FILE...`` their results, which refuses missing or overlapping shares.
Exit 0: no violation; 1: violations (printed, one per line); 2: the topics could not be read or
the shares do not merge; 70: a worker's share was taken away by its group mid-read."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from pathlib import Path

from aiokafka.errors import KafkaError

from holdem.core.wire.connection import ConnectionConfigError, KafkaConnection
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics, topics_from_env
from holdem.harness.audit import AuditReport, audit_run
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_stream import SHARE_LOST, ShareLostError, check_shares, stream_partial

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
    p.add_argument("--whole", action="store_true", help="read the whole log into memory first")
    p.add_argument("--workers", type=int, default=1, help="processes that split the partitions")
    p.add_argument("--group", help="as one worker: the workers' consumer group, new for each audit")
    p.add_argument("--members", type=int, default=1, help="as one worker: the group's size")
    p.add_argument("--out", help="as one worker: write its partial result (JSON) here")
    p.add_argument("--merge", nargs="+", metavar="FILE", help="merge the workers' partial results")
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
    if args.merge:
        return _merge(args.merge, args.all)
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
    if args.workers > 1:
        return asyncio.run(_workers(args, argv or sys.argv[1:]))
    try:
        if args.whole:
            report = asyncio.run(
                audit_run(connection, topics, require_ended=args.require_ended, roles=roles)
            )
        else:
            audit = AuditFold(
                require_ended=args.require_ended, operator=operator_of_prefix(topics.prefix)
            )
            partial = asyncio.run(
                stream_partial(
                    connection, topics, audit, roles=roles, group=args.group, members=args.members
                )
            )
            if args.out:
                Path(args.out).write_text(json.dumps(partial))
                return 0
            report = AuditFold.merge([partial])
    except ShareLostError as error:
        print(f"holdem audit: {error}", file=sys.stderr)
        return SHARE_LOST
    except (KafkaError, LookupError, TimeoutError) as error:
        print(f"holdem audit: cannot read the topics: {error!r}", file=sys.stderr)
        return 2
    print("\n".join(report_lines(report, None if args.all else SHOWN)))
    return 0 if report.ok else 1


def _merge(files: list[str], show_all: bool) -> int:
    try:
        partials = [json.loads(Path(name).read_text()) for name in files]
        check_shares(partials)
    except (OSError, ValueError, KeyError) as error:
        print(f"holdem audit: cannot merge: {error}", file=sys.stderr)
        return 2
    report = AuditFold.merge(partials)
    print("\n".join(report_lines(report, None if show_all else SHOWN)))
    return 0 if report.ok else 1


async def _workers(args: argparse.Namespace, argv: list[str]) -> int:
    """Start ``--workers`` copies of this command as one consumer group, each writing its share's
    partial result, then merge them."""
    passed = [a for a in argv if not a.startswith("--workers")]
    if "--workers" in argv:  # "--workers N" as two words
        at = argv.index("--workers")
        passed = argv[:at] + argv[at + 2 :]
    group = f"holdem-audit-{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="holdem-audit-") as scratch:
        outs = [str(Path(scratch) / f"share-{n}.json") for n in range(args.workers)]
        workers = []
        for out in outs:
            more = ["--group", group, "--members", str(args.workers), "--out", out]
            workers.append(
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "holdem.harness.audit_cli", *passed, *more
                )
            )
        codes = [await worker.wait() for worker in workers]
        failed = [code for code in codes if code != 0]
        if failed:
            print(f"holdem audit: workers exited {codes}", file=sys.stderr)
            return SHARE_LOST if SHARE_LOST in failed else 2
        return _merge(outs, args.all)


audit_main = main  # holdem audit

if __name__ == "__main__":
    sys.exit(main())
