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
``--checkpoint DIR`` audits incrementally (ADR 041): each run reads only what the checkpoint in
DIR has not audited, up to ``--until T`` (each partition's first record stamped at or after T),
prints the findings that are final and new, and carries the rounds still open to the next run;
``--final`` also judges what is still open and checks the end-of-log invariants (money's
conservation) and closes the chain. ``--since T`` starts a chain (or a period alone, without
``--checkpoint``) at each partition's first record stamped at or after T.
Exit 0: no violation; 1: violations (printed, one per line); 2: the topics could not be read,
the shares do not merge, or the checkpoint cannot continue this audit; 70: a worker's share
was taken away by its group mid-read."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from pathlib import Path

from aiokafka.errors import KafkaError

from holdem.core import heap
from holdem.core.wire.connection import ConnectionConfigError, KafkaConnection
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics, topics_from_env
from holdem.harness.audit import AuditReport, audit_run
from holdem.harness.audit_checkpoint import (
    NAME,
    CheckpointError,
    KafkaSource,
    parse_time,
    run_period,
)
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
    p.add_argument("--checkpoint", metavar="DIR", help="audit incrementally, carrying state in DIR")
    p.add_argument("--since", help="from each partition's first record at or after this time")
    p.add_argument("--until", help="up to each partition's first record at or after this time")
    p.add_argument("--final", action="store_true", help="with --checkpoint: close the chain")
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
    if argv is None:  # its own process (a test calling main(argv) keeps pytest's collector)
        heap.tune()  # ADR 045: the fold allocates per record
    if args.merge:
        return _merge(args.merge, args.all)
    try:
        connection = KafkaConnection.from_file_or_env(args.env_file)
    except ConnectionConfigError as error:
        print(f"holdem audit: {error}", file=sys.stderr)
        return 2
    topics = Topics().with_prefix(args.prefix) if args.prefix else topics_from_env()
    roles = OPERATOR_ROLES if args.operator else None
    if args.checkpoint or args.since or args.until or args.final:
        return _period(args, connection, topics, roles)
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


def _period(
    args: argparse.Namespace,
    connection: KafkaConnection,
    topics: Topics,
    roles: tuple[str, ...] | None,
) -> int:
    """An incremental audit's run (ADR 041): one period, its new findings printed."""
    if args.whole or args.workers > 1 or args.group or args.out:
        print("holdem audit: --checkpoint/--since/--until read alone: not with --whole, "
              "--workers, --group or --out", file=sys.stderr)  # fmt: skip
        return 2
    if args.final and not args.checkpoint:
        print("holdem audit: --final closes a --checkpoint chain", file=sys.stderr)
        return 2
    try:
        since = parse_time(args.since) if args.since else None
        until = parse_time(args.until) if args.until else None
    except ValueError as error:
        print(f"holdem audit: {error}", file=sys.stderr)
        return 2
    options = {
        "require_ended": args.require_ended,
        "operator": operator_of_prefix(topics.prefix),
        "prefix": topics.prefix,
        "roles": list(roles) if roles else None,
    }
    directory = Path(args.checkpoint) if args.checkpoint else None
    try:
        period = asyncio.run(
            run_period(
                KafkaSource(connection, topics, roles),
                directory,
                options,
                since=since,
                until=until,
                final=args.final,
            )
        )
    except CheckpointError as error:
        assert directory is not None  # a period alone has no checkpoint to refuse
        why = " ".join(str(error).split())  # one line, whatever the reason holds
        print(f"holdem audit: checkpoint {directory / NAME} refused: {why}", file=sys.stderr)
        return 2
    except (KafkaError, LookupError, TimeoutError) as error:
        print(f"holdem audit: cannot read the topics: {error!r}", file=sys.stderr)
        return 2
    r = period.report
    closed = args.final or directory is None
    lines = [
        f"{period.read} records read{' (resumed)' if period.resumed else ''}; so far "
        f"{r.records} records, {r.rounds} rounds judged, {r.ended} ended"
        + (f", {r.forced} forced" if r.forced else "")
        + (
            f": final, {len(r.violations)} violations in all"
            if closed
            else f", {len(r.violations)} violations found so far"
        )
        + f"; {len(period.new)} new"
    ]
    shown = period.new if args.all else period.new[:SHOWN]
    lines += [f"  {v}" for v in shown]
    if len(shown) < len(period.new):
        lines.append(f"  ... {len(period.new) - len(shown)} more (--all)")
    print("\n".join(lines))
    return 1 if period.new or (closed and r.violations) else 0


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
