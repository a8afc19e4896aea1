"""``holdem-auditor``: the live auditor (issue 31 item 4). It folds the game's log as it is
written with the streaming audit's ``AuditFold`` and reports each finding at once: counted in
``holdem_audit_violations_total{invariant}`` and written to ``[prefix.]holdem.audit.findings``,
keyed by its SHA-256.

It connects as the ``HOLDEM_KAFKA_*`` variables say (the ``auditor`` principal: it reads the
game's topics but the vault and the admin's, reads and writes its findings topic only, and
commits its positions to its own group ``[prefix.]holdem-auditor``, for the operator's tools),
on the topics of ``HOLDEM_TOPIC_PREFIX``. With a checkpoint directory (``--checkpoint-dir``,
``HOLDEM_AUDITOR_CHECKPOINT_DIR``; ADR 044) it writes its fold and each partition's next offset
to ``DIR/auditor.ckpt`` every ``--checkpoint-s`` seconds (or ``CHECKPOINT_RECORDS`` records) and
on a graceful stop, in ``holdem audit --checkpoint``'s format (``audit_checkpoint``), and a
start resumes from it; a checkpoint that is corrupt, of another code, of other options or of
another log is refused (logged critical, moved aside as ``auditor.ckpt.refused``) and the start
reads the log from its beginning. Without one every start reads the log from its beginning.
Either way it reads the findings topic first, so a finding already written is neither written
nor counted again (a crash between a finding written and the next checkpoint finds it again).

Records are read committed, each partition in offset order, the partitions interleaved by
record time. When it has read everything there is (a quiet log), the fold's clock moves to the
wall clock less ``--grace-s`` (``AuditFold.tick``), so a round that is done is judged within
the grace plus the fold's quiet time of its last record, not only when later records arrive.

Not live: the checks that conclude only at the end of a period (money conserved across
partitions, the tables', sessions' and event ids' end checks): ``holdem audit`` over the period.
Exit 0 on SIGTERM or SIGINT; 2 on a bad setting or a missing topic; 70 when Kafka fails, or when
a stop outlasts ``STOP_BOUND_S`` (a broker gone, say: it is logged, and the process ends)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import heapq
import json
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from holdem.core import heap, manifest
from holdem.core.wire.connection import (
    ConnectionConfigError,
    KafkaConnection,
    start_or_close,
)
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics, topics_from_env
from holdem.harness import audit_checkpoint
from holdem.harness.audit_checkpoint import Checkpoint, CheckpointError
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_read import read_topic
from holdem.harness.audit_stream import BUFFERED, _partition_counts, _record
from holdem.ops.acl import AUDITOR_GROUP, AUDITOR_READS, findings_topic
from holdem.runtime.logging import configure_logging
from holdem.runtime.stopping import StopWatch

SERVICE = "auditor"
GRACE_S = 30.0  # the wall clock less this is the fold's clock on a quiet log
METRICS_PORT = 9107  # HOLDEM_METRICS_PORT's default here (9101-9106: the services, back office)
# From a stop signal to the process's end: the last findings, the fold's checkpoint (1-3 s at
# 22 MB, the soak's), the offsets; below the launcher's 15 s grace and compose's 30 s.
STOP_BOUND_S = 12.0
TICK_S = 1.0  # between two looks at a quiet log (tick, lag, commit)
FETCH_MS = 500
HOLD_S = 5.0  # longest a partition still behind its end holds the others back (record time)
CHECKPOINT_ENV = "HOLDEM_AUDITOR_CHECKPOINT_DIR"
CHECKPOINT_NAME = "auditor.ckpt"
CHECKPOINT_S = 30.0  # between two checkpoints (wall time) ...
CHECKPOINT_RECORDS = 200_000  # ... or after this many records folded, whichever comes first
EXIT_CONFIG = 2
EXIT_KAFKA = 70

# The invariant a finding is counted under: the first of these its text contains (a bounded
# label set; the text itself is the finding's record).
INVARIANTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("late_record", ("after the round was done",)),
    ("secrecy", ("visible at",)),
    ("seamless", ("debit", "credit", "rolled back", "operator", "seamless")),
    ("deck", ("deck", "commitment", "revealed cards", "Dealt")),
    ("settlement", ("Settled", "settle")),
    ("closed", ("closed",)),
    ("money", ("stake", "hold", "paid", "refund", "money", "wallet", "voided with", "free hand")),
    ("round", ("BetPlaced", "ended", "decided", "without a")),
)

log = structlog.get_logger()


def invariant_of(finding: str) -> str:
    """The label a finding is counted under.

    >>> invariant_of("p1/r1: ended (round.voided) without a BetPlaced")
    'round'
    >>> invariant_of("p1/r1: round.settled at rounds[0]@7 after the round was done")
    'late_record'
    >>> invariant_of("something new")
    'other'
    """
    for name, marks in INVARIANTS:
        if any(mark in finding for mark in marks):
            return name
    return "other"


def finding_key(finding: str) -> bytes:
    """A finding's key on its topic: the SHA-256 of its text, hex."""
    return hashlib.sha256(finding.encode()).hexdigest().encode()


def auditor_roles(seamless: bool = False) -> list[str]:
    """The roles the live auditor reads (the seamless bridge's replies only where it runs)."""
    return [r for r in AUDITOR_READS if seamless or r != "seamless_replies"]


def checkpoint_options(topics: Topics, roles: Sequence[str], fold: AuditFold) -> dict[str, object]:
    """What a live auditor's checkpoint must agree on to be continued or read (besides the
    code's fingerprint): the deployment, what it reads and how its fold judges."""
    return {
        "service": SERVICE,
        "prefix": topics.prefix,
        "roles": sorted(roles),
        "operator": fold.operator,
        "require_ended": fold.require_ended,
    }


class AuditorMetrics:
    """The auditor's Prometheus families (names are a contract with deploy/prometheus)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.violations = Counter(
            "holdem_audit_violations",
            "Findings of the live auditor, each counted once (also across its restarts)",
            ["invariant"],
            registry=registry,
        )
        self.records = Counter(
            "holdem_audit_records", "Records folded by the live auditor", registry=registry
        )
        self.lag_records = Gauge(
            "holdem_audit_lag_records",
            "Committed records not yet folded, over every partition read",
            registry=registry,
        )
        self.lag_seconds = Gauge(
            "holdem_audit_lag_seconds",
            "Wall time less the record time of the oldest record not yet folded (0 when at the "
            "end of every partition)",
            registry=registry,
        )
        self.rounds_held = Gauge(
            "holdem_audit_rounds_held", "Rounds held open by the fold", registry=registry
        )
        self.ready = Gauge(
            "holdem_audit_ready",
            "1 once the auditor has read up to the log's end as it was at its start",
            registry=registry,
        )
        self.build_info = Gauge(
            "holdem_build_info",
            "1, labelled with the release and the digest of its certified parts' manifest",
            ["service", "version", "manifest"],
            registry=registry,
        )
        self.started = Gauge(
            "holdem_started_seconds",
            "Unix time this process started",
            ["service"],
            registry=registry,
        )
        for name, _ in INVARIANTS:  # every label shown at 0: an alert sees the first increase
            self.violations.labels(name)
        self.violations.labels("other")

    def announce_build(self) -> None:
        self.build_info.labels(
            SERVICE, manifest.release_version(), manifest.installed_digest()
        ).set(1)
        self.started.labels(SERVICE).set(time.time())


@dataclass
class Interleave:
    """Per-partition buffers released in record time: what every partition still behind its
    end has gone past. A partition at its end holds nothing back; one behind it holds the
    others back for at most ``HOLD_S`` (a partition whose fetch lags must not stall the fold)."""

    partitions: Sequence[TopicPartition]
    buffers: dict[TopicPartition, deque[ConsumerRecord[bytes, bytes]]] = field(init=False)
    held_since: float | None = None

    def __post_init__(self) -> None:
        self.buffers = {tp: deque() for tp in self.partitions}

    def add(self, tp: TopicPartition, records: Iterable[ConsumerRecord[bytes, bytes]]) -> None:
        self.buffers[tp].extend(records)

    def full(self) -> list[TopicPartition]:
        return [tp for tp, b in self.buffers.items() if len(b) >= BUFFERED]

    def buffered(self) -> int:
        return sum(len(b) for b in self.buffers.values())

    def oldest(self) -> int | None:
        return min((b[0].timestamp for b in self.buffers.values() if b), default=None)

    def release(self, behind: set[TopicPartition]) -> list[ConsumerRecord[bytes, bytes]]:
        """The records that can go now, in record time (``behind``: partitions not at their
        end)."""
        holding = [tp for tp in behind if not self.buffers[tp]]
        if holding:
            now = time.monotonic()
            self.held_since = self.held_since or now
            if now - self.held_since < HOLD_S:
                return []
        self.held_since = None
        lasts = [b[-1].timestamp for b in self.buffers.values() if b]
        if not lasts:
            return []
        bound = min(lasts)
        ready = []
        for buffer in self.buffers.values():
            out = []
            while buffer and buffer[0].timestamp <= bound:
                out.append(buffer.popleft())
            if out:
                ready.append(out)
        return list(heapq.merge(*ready, key=lambda r: r.timestamp))


class Auditor:
    """The live fold of one deployment's topics, its findings and its metrics."""

    def __init__(
        self,
        connection: KafkaConnection,
        topics: Topics,
        *,
        grace_s: float = GRACE_S,
        seamless: bool = False,
        registry: CollectorRegistry | None = None,
        checkpoint_dir: Path | None = None,
        checkpoint_s: float = CHECKPOINT_S,
        checkpoint_records: int = CHECKPOINT_RECORDS,
    ) -> None:
        self.connection = connection
        self.topics = topics
        self.grace_ms = int(grace_s * 1000)
        self.roles = auditor_roles(seamless)
        self.registry = registry or CollectorRegistry()
        self.metrics = AuditorMetrics(self.registry)
        self.fold = AuditFold(operator=operator_of_prefix(topics.prefix))
        self.findings_topic = findings_topic(topics)
        self.written: set[bytes] = set()  # the keys on the findings topic
        self.reported = 0  # findings written by this process
        self.known = 0  # findings the fold found again that were already on the topic
        self.stop = asyncio.Event()
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_s = checkpoint_s
        self.checkpoint_records = checkpoint_records
        # What a checkpoint must agree on to be continued (besides the code's fingerprint).
        self.options = checkpoint_options(topics, self.roles, self.fold)
        self.folded: dict[TopicPartition, int] = {}  # each partition's next offset to fold
        self.resumed = 0  # the records the fold had folded in the checkpoint it resumed from
        self.saved = (0.0, 0)  # the last checkpoint: monotonic time, fold.records

    async def run(self) -> None:
        """Until ``stop``: read the findings, then fold the log as it is written."""
        for r in await read_topic(self.connection, self.findings_topic):
            if r.key is not None:
                self.written.add(r.key)
        log.info("findings_read", topic=self.findings_topic, findings=len(self.written))
        counts = await _partition_counts(self.connection, self.topics, self.roles)
        roles = {self.topics.name(role): role for role in counts}
        partitions = [
            TopicPartition(t, p) for t, role in roles.items() for p in range(counts[role])
        ]
        scope = f"{self.topics.prefix}." if self.topics.prefix else ""
        consumer = AIOKafkaConsumer(
            **self.connection.kwargs(),
            group_id=f"{scope}{AUDITOR_GROUP}",
            isolation_level="read_committed",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        producer = AIOKafkaProducer(**self.connection.kwargs(), acks="all", enable_idempotence=True)
        await start_or_close(consumer)
        try:
            await start_or_close(producer)
            try:
                await self._fold(consumer, producer, partitions, roles)
            finally:
                await producer.stop()
        finally:
            await consumer.stop()

    async def _fold(
        self,
        consumer: AIOKafkaConsumer,
        producer: AIOKafkaProducer,
        partitions: list[TopicPartition],
        roles: dict[str, str],
    ) -> None:
        consumer.assign(partitions)
        begins = await consumer.beginning_offsets(partitions)
        first_ends = await consumer.end_offsets(partitions)
        # An explicit seek (audit_read: a reset still in flight would win over seek_to_beginning).
        self.folded = self.resume(begins, first_ends, roles)
        for tp, offset in self.folded.items():
            consumer.seek(tp, offset)
        self.saved = (time.monotonic(), self.fold.records)
        ends = dict(first_ends)
        interleave = Interleave(partitions)
        started = time.monotonic()
        ready = False
        last_look = 0.0
        while not self.stop.is_set():
            full = interleave.full()
            consumer.pause(*full)
            consumer.resume(*[tp for tp in partitions if tp not in full])
            fetched = await consumer.getmany(timeout_ms=FETCH_MS)
            for tp, batch in fetched.items():
                interleave.add(tp, batch)
            for tp in partitions:  # the committed end as the latest fetch saw it
                lso = consumer.last_stable_offset(tp)
                if lso is not None:
                    ends[tp] = max(ends[tp], lso)
            positions = {tp: await consumer.position(tp) for tp in partitions}
            behind = {tp for tp in partitions if positions[tp] < ends[tp]}
            for r in interleave.release(behind):
                self.fold.feed(_record(roles[r.topic], r))
                self.folded[TopicPartition(r.topic, r.partition)] = r.offset + 1
                self.metrics.records.inc()
            await self._report(producer)
            quiet = not behind and not interleave.buffered()
            if not ready and all(positions[tp] >= first_ends[tp] for tp in partitions) and quiet:
                ready = True
                self.metrics.ready.set(1)
                log.info(
                    "caught_up",
                    records=self.fold.records,
                    read=self.fold.records - self.resumed,
                    resumed=self.resumed,
                    seconds=round(time.monotonic() - started, 3),
                    findings=self.reported,
                    known=self.known,
                )
            if time.monotonic() - last_look >= TICK_S:
                last_look = time.monotonic()
                if quiet:
                    self.fold.tick(int(time.time() * 1000) - self.grace_ms)
                    await self._report(producer)
                self._measure(positions, ends, interleave, quiet)
                await self._commit(consumer, positions)
                if self._checkpoint_due():
                    await self.save_checkpoint(roles)
        await self._report(producer)
        await self.save_checkpoint(roles)
        await self._commit(consumer, {tp: await consumer.position(tp) for tp in partitions})

    def resume(
        self,
        begins: Mapping[TopicPartition, int],
        ends: Mapping[TopicPartition, int],
        roles: Mapping[str, str],
    ) -> dict[TopicPartition, int]:
        """Each partition's first offset to fold: the checkpoint's (its fold replaces ours), or
        the log's beginning without one or when it is refused."""
        starts = dict(begins)
        if self.checkpoint_dir is None:
            return starts
        path = self.checkpoint_dir / CHECKPOINT_NAME
        try:
            checkpoint = audit_checkpoint.load(self.checkpoint_dir, self.options, CHECKPOINT_NAME)
            if checkpoint is None:
                log.info("checkpoint_none", path=str(path))
                return starts
            offsets = self._offsets(checkpoint, begins, ends, roles)
        except Exception as error:  # CheckpointError for any file (load's); else a bug: refused too
            self._refuse(path, error)
            return starts
        assert checkpoint.fold is not None
        self.fold, self.resumed = checkpoint.fold, checkpoint.fold.records
        log.info("checkpoint_loaded", path=str(path), records=self.resumed)
        return offsets

    @staticmethod
    def _offsets(
        checkpoint: Checkpoint,
        begins: Mapping[TopicPartition, int],
        ends: Mapping[TopicPartition, int],
        roles: Mapping[str, str],
    ) -> dict[TopicPartition, int]:
        """The checkpoint's offsets on this log's partitions; ``CheckpointError`` if they
        cannot be this log's (a partition gone or past its end) or records were deleted
        (retention) before they were folded."""
        if checkpoint.final or checkpoint.fold is None:
            raise CheckpointError("it holds no fold (a closed chain of holdem audit)")
        here = {(roles[tp.topic], tp.partition): tp for tp in begins}
        gone = sorted(set(checkpoint.offsets) - set(here))
        if gone:
            raise CheckpointError(f"partitions {gone} are not in this log")
        offsets = {}
        for part, tp in here.items():
            offset = checkpoint.offsets.get(part, begins[tp])  # a partition added: all of it
            if offset > ends[tp]:
                raise CheckpointError(
                    f"{tp.topic}[{tp.partition}]: offset {offset} is past the log's end "
                    f"{ends[tp]}: another log's checkpoint"
                )
            if offset < begins[tp]:
                raise CheckpointError(
                    f"{tp.topic}[{tp.partition}]: records {offset} to {begins[tp] - 1} were "
                    "deleted before they were folded"
                )
            offsets[tp] = offset
        return offsets

    def _refuse(self, path: Path, error: Exception) -> None:
        """Loudly, and out of the way: the file is kept as ``auditor.ckpt.refused`` for the
        operator, the next checkpoint is written afresh."""
        aside = path.with_name(path.name + ".refused")
        with contextlib.suppress(OSError):
            os.replace(path, aside)
        log.critical(
            "checkpoint_refused",
            path=str(path),
            moved_to=str(aside),
            error=f"{type(error).__name__}: {error}",
            then="reading the log from its beginning",
        )

    def _checkpoint_due(self) -> bool:
        if self.checkpoint_dir is None:
            return False
        at, records = self.saved
        if self.fold.records == records:
            return False
        waited = time.monotonic() - at
        return waited >= self.checkpoint_s or self.fold.records - records >= self.checkpoint_records

    async def save_checkpoint(self, roles: Mapping[str, str]) -> None:
        """The fold and each partition's next offset to fold, written atomically. Called with
        every finding reported, so a resumed fold finds nothing twice; a failed write is
        logged and the auditor goes on (the previous checkpoint stays)."""
        if self.checkpoint_dir is None or self.fold.found:
            return
        started = time.monotonic()
        offsets = {(roles[tp.topic], tp.partition): o for tp, o in self.folded.items()}
        data = audit_checkpoint.encode(Checkpoint(dict(self.options), offsets, fold=self.fold))
        try:
            self.checkpoint_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # its own
            await asyncio.to_thread(
                audit_checkpoint.write, self.checkpoint_dir, data, CHECKPOINT_NAME
            )
        except OSError as error:
            log.error("checkpoint_failed", dir=str(self.checkpoint_dir), error=str(error))
            return
        self.saved = (time.monotonic(), self.fold.records)
        log.info(
            "checkpoint_saved",
            records=self.fold.records,
            bytes=len(data),
            seconds=round(time.monotonic() - started, 3),
        )

    async def _report(self, producer: AIOKafkaProducer) -> None:
        """Write and count the fold's new findings, each once."""
        if not self.fold.found:
            return
        found, self.fold.found = self.fold.found, []
        for finding in found:
            key = finding_key(finding)
            if key in self.written:
                self.known += 1
                continue
            invariant = invariant_of(finding)
            value = {
                "finding": finding,
                "invariant": invariant,
                "found_at": datetime.now(UTC).isoformat(),
                "records_folded": self.fold.records,
            }
            await producer.send_and_wait(
                self.findings_topic, json.dumps(value).encode(), key=key, partition=0
            )
            self.written.add(key)
            self.reported += 1
            self.metrics.violations.labels(invariant).inc()
            log.warning("finding", invariant=invariant, finding=finding)

    def _measure(
        self,
        positions: dict[TopicPartition, int],
        ends: dict[TopicPartition, int],
        interleave: Interleave,
        quiet: bool,
    ) -> None:
        unread = sum(max(ends[tp] - positions[tp], 0) for tp in positions)
        self.metrics.lag_records.set(unread + interleave.buffered())
        oldest = interleave.oldest()
        if quiet:
            seconds = 0.0
        elif oldest is not None:
            seconds = max(time.time() - oldest / 1000, 0.0)
        else:  # behind with nothing buffered: at least since the last record folded
            seconds = max(time.time() - self.fold.clock / 1000, 0.0) if self.fold.clock else 0.0
        self.metrics.lag_seconds.set(seconds)
        self.metrics.rounds_held.set(len(self.fold.pending))

    async def _commit(
        self, consumer: AIOKafkaConsumer, positions: dict[TopicPartition, int]
    ) -> None:
        """The group's positions, for the operator's tools (a restart reads from its
        checkpoint, or from the start)."""
        read = {tp: p for tp, p in positions.items() if p > 0}
        if not read:  # an empty log: nothing to say (and aiokafka refuses an empty commit)
            return
        with contextlib.suppress(KafkaError):  # informative only: a missed commit is harmless
            await consumer.commit(read)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="holdem-auditor", description=(__doc__ or "").split("\n\n")[0].replace("``", "")
    )
    p.add_argument("--env-file", help="HOLDEM_KAFKA_* file, e.g. DIR/clients/auditor.env")
    p.add_argument("--prefix", help="topic prefix (default: HOLDEM_TOPIC_PREFIX, else none)")
    p.add_argument("--grace-s", type=float, default=GRACE_S, help="quiet log: wall clock less this")
    p.add_argument(
        "--metrics-port",
        type=int,
        default=int(os.environ.get("HOLDEM_METRICS_PORT", METRICS_PORT)),
        help="/metrics port (HOLDEM_METRICS_PORT; 0: off)",
    )
    p.add_argument(
        "--metrics-host", default=os.environ.get("HOLDEM_METRICS_HOST", "0.0.0.0"), help="address"
    )
    p.add_argument(
        "--checkpoint-dir",
        type=Path,
        default=os.environ.get(CHECKPOINT_ENV) or None,
        help=f"resume from and checkpoint to DIR/{CHECKPOINT_NAME} ({CHECKPOINT_ENV}; none: "
        "every start reads the log from its beginning)",
    )
    p.add_argument(
        "--checkpoint-s", type=float, default=CHECKPOINT_S, help="seconds between checkpoints"
    )
    p.add_argument(
        "--seamless",
        action="store_true",
        default=os.environ.get("HOLDEM_WALLET_MODE") == "seamless",
        help="read the operator wallet's replies too (HOLDEM_WALLET_MODE=seamless)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    configure_logging(SERVICE)
    if args.grace_s < 0 or args.checkpoint_s <= 0 or not 0 <= args.metrics_port <= 65535:
        log.critical(
            "bad_setting",
            grace_s=args.grace_s,
            checkpoint_s=args.checkpoint_s,
            metrics_port=args.metrics_port,
        )
        return EXIT_CONFIG
    try:
        connection = KafkaConnection.from_file_or_env(args.env_file)
    except ConnectionConfigError as error:
        log.critical("bad_connection", error=str(error))
        return EXIT_CONFIG
    topics = Topics().with_prefix(args.prefix) if args.prefix else topics_from_env()
    auditor = Auditor(
        connection,
        topics,
        grace_s=args.grace_s,
        seamless=args.seamless,
        checkpoint_dir=args.checkpoint_dir,
        checkpoint_s=args.checkpoint_s,
    )
    auditor.metrics.announce_build()
    if args.metrics_port:
        start_http_server(args.metrics_port, args.metrics_host, registry=auditor.registry)
    if argv is None:  # its own process (a test calling main(argv) keeps pytest's collector)
        heap.tune()  # ADR 045: the fold allocates per record
    return asyncio.run(_serve(auditor))


def _hung() -> None:
    logging.shutdown()
    os._exit(EXIT_KAFKA)


async def _serve(auditor: Auditor, stop_bound_s: float = STOP_BOUND_S) -> int:
    """Run until SIGINT/SIGTERM; from the signal to the process's end within ``stop_bound_s``
    (``holdem.runtime.stopping``, as the services'), or status 70: a stop whose broker is gone
    (the last findings and the group's offsets cannot be sent) must not keep it up for ever."""
    loop = asyncio.get_running_loop()
    watch: list[StopWatch] = []

    def stop() -> None:
        auditor.stop.set()
        if not watch:  # the first signal starts the bound; the process's end keeps it
            watch.append(StopWatch(SERVICE, stop_bound_s, _hung, until_exit=True))
            watch[0].__enter__()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    try:
        await auditor.run()
    except LookupError as error:  # a topic missing: not created yet, or another prefix
        log.critical("no_topic", error=str(error))
        return EXIT_CONFIG
    except (KafkaError, OSError) as error:
        log.critical("kafka_failed", error=repr(error))
        return EXIT_KAFKA
    log.info(
        "stopped", records=auditor.fold.records, findings=auditor.reported, known=auditor.known
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
