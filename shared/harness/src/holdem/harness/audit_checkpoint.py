"""Incremental audits (issue 31 item 3, ADR 041): ``holdem audit --checkpoint DIR [--since T]
[--until T] [--final]`` audits a period and carries what is still open to the next.

The checkpoint is one file, ``DIR/audit.ckpt``: a first line naming the format, a second the
SHA-256 of everything after it, a header (JSON, one line: the format, a fingerprint of the
audit's code, the options, each partition's next offset, the cut, the findings already printed)
and the streaming fold's state (a pickle, loaded by an unpickler that builds only ``holdem.*``
classes and a few containers). It is written to a temporary file, fsynced and renamed over the
old one, so a killed run leaves the previous checkpoint (or a later one of the same run).

A period reads each partition from the checkpoint's next offset (none: from the beginning, or
from its first record stamped at or after ``--since``) to its first record stamped at or after
``--until`` (none: to its end), the tables topic first, the rest interleaved by record time as
``audit_stream`` does, and feeds the same ``AuditFold``. Rounds still open at the cut stay in
the fold and are judged in a later period, once. A period prints the findings that are final
so far and not printed before; ``--final`` judges what is still open and checks the end-of-log
invariants (money's conservation, the windows, sessions, blocks) and closes the chain."""

from __future__ import annotations

import hashlib
import heapq
import io
import json
import os
import pickle
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

import pydantic
from aiokafka import AIOKafkaConsumer, TopicPartition
from pydantic import BaseModel, ConfigDict, Field

from holdem.core.wire.connection import KafkaConnection, as_connection, start_or_close
from holdem.core.wire.topics import Topics
from holdem.harness.audit import AuditReport
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_log import Record
from holdem.harness.audit_stream import (
    READ_TIMEOUT_S,
    WHOLE_ROLES,
    ShareListener,
    _in_record_time,
    _partition_counts,
    _record,
)

FORMAT = 1
MAGIC = b"HOLDEM-AUDIT-CHECKPOINT"
NAME = "audit.ckpt"
EVERY = 250_000  # records folded between two checkpoints written mid-period
Part = tuple[str, int]  # (role, partition)

# What the restricted unpickler may build besides ``holdem.*`` classes: containers and values.
ALLOWED = {
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "list"),
    ("builtins", "dict"),
    ("builtins", "tuple"),
    ("builtins", "int"),
    ("builtins", "str"),
    ("builtins", "bytes"),
    ("builtins", "bool"),
    ("collections", "OrderedDict"),
    ("collections", "defaultdict"),
    ("collections", "deque"),
    ("datetime", "datetime"),  # value types the contracts' fields hold
    ("datetime", "timezone"),
    ("datetime", "timedelta"),
    ("decimal", "Decimal"),
    ("holdem.harness.audit_money", "no_money"),  # MoneyWatch's accounts' factory
}


class CheckpointError(Exception):
    """A checkpoint that cannot continue this audit: the CLI's one line, exit 2."""


class _Unpickler(pickle.Unpickler):
    """Builds a class only if ``holdem.*`` defines it, or a container of ``ALLOWED``: a
    checkpoint that would call anything else (``os.system``) is refused before it runs."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        if module.startswith("holdem.") and "." not in name and not name.startswith("_"):
            found = super().find_class(module, name)
            if isinstance(found, type) and getattr(found, "__module__", "").startswith("holdem."):
                return found
        raise CheckpointError(f"its fold would build {module}.{name}: refused")


def fingerprint() -> str:
    """The audit's code: every ``audit*.py`` of the harness, the contracts that parse the
    records, and the pydantic and Python versions the fold's pickle depends on."""
    digest = hashlib.sha256(f"{sys.version_info[:2]} pydantic {pydantic.VERSION}".encode())
    harness = Path(__file__).parent
    contracts = Path(sys.modules[Record.__module__].__file__ or "").parents[1] / "core"
    files = sorted(harness.glob("audit*.py")) + sorted((contracts / "contracts").glob("*.py"))
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@dataclass
class Checkpoint:
    """A checkpoint's header and the fold it carries (None once ``--final`` closed the chain)."""

    options: dict[str, Any]
    offsets: dict[Part, int]
    until: int | None = None  # the cut of the last period done, ms
    printed: list[str] = field(default_factory=list)
    final: bool = False
    fold: AuditFold | None = None

    def header(self, code: str) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "code": code,
            "options": self.options,
            "offsets": {f"{role}/{p}": o for (role, p), o in sorted(self.offsets.items())},
            "until": self.until,
            "printed": self.printed,
            "final": self.final,
        }


def save(directory: Path, checkpoint: Checkpoint, name: str = NAME) -> None:
    """Write atomically: a temporary file in ``directory``, fsynced, renamed over the old one,
    then the directory fsynced."""
    write(directory, encode(checkpoint), name)


def encode(checkpoint: Checkpoint) -> bytes:
    """The checkpoint file's bytes (``write`` puts them in place; the live auditor encodes in
    its loop, where the fold does not move, and writes in a thread)."""
    body = io.BytesIO()
    body.write(json.dumps(checkpoint.header(fingerprint())).encode() + b"\n")
    if checkpoint.fold is not None:
        pickle.dump(checkpoint.fold, body, protocol=pickle.HIGHEST_PROTOCOL)
    data = body.getvalue()
    head = MAGIC + f" {FORMAT}\n".encode() + hashlib.sha256(data).hexdigest().encode() + b"\n"
    return head + data


def write(directory: Path, data: bytes, name: str = NAME) -> None:
    """``data`` as ``directory/name``, atomically (see ``save``)."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".audit-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, directory / name)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def load(directory: Path, options: Mapping[str, Any], name: str = NAME) -> Checkpoint | None:
    """The checkpoint ``name`` in ``directory``, None if there is none; ``CheckpointError`` (and
    nothing else) if it cannot continue this audit: unreadable, torn, of another format, corrupt,
    a header that is not JSON or not a header's shape, of another code or of other options, a
    fold that cannot be loaded or that the header contradicts. The message does not name the
    file: the caller does (the CLI's one line, the live auditor's log). The file is not touched."""
    path = directory / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CheckpointError(f"cannot be read: {error}") from error
    first, _, rest = data.partition(b"\n")
    digest, _, body = rest.partition(b"\n")
    if first != MAGIC + f" {FORMAT}".encode():
        raise CheckpointError(f"not a checkpoint of format {FORMAT} (torn, or another format)")
    if hashlib.sha256(body).hexdigest().encode() != digest:
        raise CheckpointError("corrupt: its SHA-256 does not match")
    line, _, state = body.partition(b"\n")
    header = _header(line)
    if header.code != fingerprint():
        raise CheckpointError("written by another version of the audit's code: start a new chain")
    if header.options != dict(options):
        raise CheckpointError(f"it has other options: {header.options} != {dict(options)}")
    fold = _fold(state) if state else None
    if header.final != (fold is None):
        held = "holds no fold" if fold is None else "holds a fold"
        raise CheckpointError(f"its header says final={header.final} but it {held}")
    offsets = {}
    for key, offset in header.offsets.items():
        role, _, p = key.rpartition("/")
        if not role or not (p.isascii() and p.isdigit()):
            raise CheckpointError(f"its header's offsets name {key!r}, not a role/partition")
        offsets[(role, int(p))] = offset
    return Checkpoint(
        dict(header.options), offsets, header.until, list(header.printed), header.final, fold
    )


class _Header(BaseModel):
    """A checkpoint's header as ``Checkpoint.header`` writes it (strict: no 1.0 for 1, no 1
    for true)."""

    model_config = ConfigDict(strict=True, frozen=True)

    format: Literal[1]  # FORMAT
    code: str
    options: dict[str, Any]
    offsets: dict[str, Annotated[int, Field(ge=0)]]
    until: int | None
    printed: list[str]
    final: bool


def _header(line: bytes) -> _Header:
    """The header line, or ``CheckpointError`` saying what is wrong with it (not JSON, not an
    object, a field missing or of another type)."""
    try:
        return _Header.model_validate_json(line)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        if first["type"] == "json_invalid":
            raise CheckpointError(f"its header is not JSON: {first['msg']}") from None
        where = ".".join(str(part) for part in first["loc"]) or "the header"
        why = f"{where}: {first['msg']}"
        raise CheckpointError(f"its header is not a checkpoint's: {why}") from None


def _fold(state: bytes) -> AuditFold:
    """The fold's pickle, built by ``_Unpickler``; ``CheckpointError`` for whatever stops it
    (a class refused, a truncated or forged pickle, something else than a fold)."""
    try:
        fold = _Unpickler(io.BytesIO(state)).load()
    except CheckpointError:
        raise
    except Exception as error:  # pickle's own, or whatever a forged stream makes a class raise
        why = f"{type(error).__name__}: {error}"
        raise CheckpointError(f"its fold cannot be loaded: {why}") from None
    if not isinstance(fold, AuditFold):
        raise CheckpointError(f"it does not hold an audit's fold but a {type(fold).__name__}")
    return fold


class Source(Protocol):
    """Where a period's records come from: Kafka (``KafkaSource``) or memory (``MemorySource``)."""

    async def bounds(self) -> tuple[dict[Part, int], dict[Part, int]]:
        """Each partition's first offset and its end (committed records only)."""
        ...

    async def cut(self, stamp_ms: int) -> dict[Part, int]:
        """Each partition's first offset stamped at or after ``stamp_ms``, else its end."""
        ...

    def read(self, starts: Mapping[Part, int], stops: Mapping[Part, int]) -> AsyncIterator[Record]:
        """The records in [start, stop) of each partition: the tables first, then the others
        interleaved by record time, each partition in offset order."""
        ...


@dataclass
class Period:
    """What a period's run did: the findings it printed, the audit's counts so far (the whole
    report after ``--final``), and how many records it read."""

    new: list[str]
    report: AuditReport
    read: int
    resumed: bool


async def run_period(
    source: Source,
    directory: Path | None,
    options: Mapping[str, Any],
    *,
    since: int | None = None,
    until: int | None = None,
    final: bool = False,
    every: int = EVERY,
) -> Period:
    """Audit one period (see the module's doc); ``directory`` None: a period alone, no chain
    (then it is final). ``options``: ``require_ended`` and ``operator`` (the fold's), and
    whatever else must stay the same along a chain (the prefix, the roles, ``since``)."""
    options = {**options, "since": since}
    checkpoint = load(directory, options) if directory is not None else None
    if checkpoint is not None and checkpoint.final:
        raise CheckpointError("the chain was closed by --final: start a new checkpoint directory")
    begins, ends = await source.bounds()
    if checkpoint is None:
        starts = await source.cut(since) if since is not None else dict(begins)
        new_fold = AuditFold(require_ended=options["require_ended"], operator=options["operator"])
        checkpoint = Checkpoint(dict(options), {}, fold=new_fold)
        resumed = False
    else:
        starts = {part: checkpoint.offsets.get(part, begin) for part, begin in begins.items()}
        for part, offset in sorted(starts.items()):
            if offset < begins[part]:
                raise CheckpointError(
                    f"{part[0]}[{part[1]}]: records {offset} to {begins[part] - 1} were deleted "
                    "before they were audited"
                )
        resumed = True
    if until is not None and checkpoint.until is not None and until < checkpoint.until:
        raise CheckpointError(f"--until {until} is before the checkpoint's cut {checkpoint.until}")
    stops = await source.cut(until) if until is not None else dict(ends)
    for part, offset in sorted(starts.items()):
        if offset > stops[part]:
            raise CheckpointError(
                f"{part[0]}[{part[1]}]: the checkpoint is at offset {offset}, past --until's "
                f"cut {stops[part]}"
            )
    fold = checkpoint.fold
    assert fold is not None
    position = dict(starts)
    read = 0
    async for record in source.read(starts, stops):
        fold.feed(record)
        position[(record.role, record.partition)] = record.offset + 1
        read += 1
        if directory is not None and read % every == 0:
            checkpoint.offsets = dict(position)
            save(directory, checkpoint)
    checkpoint.offsets = dict(stops)
    checkpoint.until = until
    if final or directory is None:
        report = fold.report()
        new = _unprinted(report.violations, checkpoint.printed)
        checkpoint.fold, checkpoint.final = None, True
        checkpoint.printed = []  # the chain is closed: the report holds them all
    else:
        new = _unprinted(so_far(fold), checkpoint.printed)
        checkpoint.printed += new
        report = AuditReport(fold.records, fold.rounds, fold.ended, so_far(fold), fold.forced)
    if directory is not None:
        save(directory, checkpoint)
    return Period(new, report, read, resumed)


def so_far(fold: AuditFold) -> list[str]:
    """The findings that no later record can undo: the judged rounds', the late records', and
    what each watch has found so far (their end-of-log checks wait for ``--final``)."""
    w = fold.watches
    return [
        *fold.found,
        *w.money.found,
        *w.tables.versions_found,
        *w.tables.found,
        *w.sessions.found,
        *w.blocks.found,
        *w.forced.found,
        *w.event_ids.found,
    ]


def _unprinted(found: Sequence[str], printed: Iterable[str]) -> list[str]:
    left = Counter(printed)
    new = []
    for finding in found:
        if left[finding] > 0:
            left[finding] -= 1
        else:
            new.append(finding)
    return new


def parse_time(text: str) -> int:
    """``--since``/``--until``: milliseconds since the epoch, or an ISO 8601 time with its
    offset (``2026-12-05T18:00:00Z``)."""
    if text.isdigit():
        return int(text)
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError as error:
        raise ValueError(f"not a time: {text!r} (ms since the epoch, or ISO 8601)") from error
    if stamp.tzinfo is None:
        raise ValueError(f"a time needs its offset (Z or +hh:mm): {text!r}")
    return int(stamp.timestamp() * 1000)


class MemorySource:
    """Records already in memory (tests, the bench): each partition's list in offset order."""

    def __init__(self, records: Iterable[Record], gone: Mapping[Part, int] | None = None) -> None:
        self.parts: dict[Part, list[Record]] = {}
        for record in records:
            self.parts.setdefault((record.role, record.partition), []).append(record)
        for part in self.parts.values():
            part.sort(key=lambda r: r.offset)
        self.gone = dict(gone or {})  # offsets below these were deleted (retention)

    async def bounds(self) -> tuple[dict[Part, int], dict[Part, int]]:
        begins = {p: self.gone.get(p, 0) for p in self.parts}
        return begins, {p: rs[-1].offset + 1 for p, rs in self.parts.items()}

    async def cut(self, stamp_ms: int) -> dict[Part, int]:
        _, ends = await self.bounds()
        return {
            p: next((r.offset for r in rs if r.timestamp >= stamp_ms), ends[p])
            for p, rs in self.parts.items()
        }

    async def read(
        self, starts: Mapping[Part, int], stops: Mapping[Part, int]
    ) -> AsyncIterator[Record]:
        def span(p: Part) -> list[Record]:
            return [r for r in self.parts[p] if starts[p] <= r.offset < stops[p]]

        for whole in (True, False):
            chosen = [span(p) for p in sorted(self.parts) if (p[0] in WHOLE_ROLES) == whole]
            for record in heapq.merge(*chosen, key=lambda r: r.timestamp):
                yield record


class KafkaSource:
    """A deployment's topics (read committed), as ``audit_stream`` reads them."""

    def __init__(
        self, connection: KafkaConnection | str, topics: Topics, roles: Iterable[str] | None
    ) -> None:
        self.connection = as_connection(connection)
        self.topics = topics
        self.roles = roles
        self.names: dict[str, str] = {}
        self.counts: dict[str, int] = {}

    async def _consumer(self) -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(
            **self.connection.kwargs(),
            isolation_level="read_committed",
            enable_auto_commit=False,
            auto_offset_reset="none",  # an offset that is gone is an error, not a silent reset
        )
        await start_or_close(consumer)
        return consumer

    async def _tps(self) -> list[TopicPartition]:
        if not self.counts:
            self.counts = await _partition_counts(self.connection, self.topics, self.roles)
            self.names = {getattr(self.topics, role): role for role in self.counts}
        return [
            TopicPartition(getattr(self.topics, role), p)
            for role, count in sorted(self.counts.items())
            for p in range(count)
        ]

    def _part(self, tp: TopicPartition) -> Part:
        return (self.names[tp.topic], tp.partition)

    async def bounds(self) -> tuple[dict[Part, int], dict[Part, int]]:
        tps = await self._tps()
        consumer = await self._consumer()
        try:
            begins = await consumer.beginning_offsets(tps)
            ends = await consumer.end_offsets(tps)  # read committed: the last stable offsets
        finally:
            await consumer.stop()
        return (
            {self._part(tp): o for tp, o in begins.items()},
            {self._part(tp): o for tp, o in ends.items()},
        )

    async def cut(self, stamp_ms: int) -> dict[Part, int]:
        tps = await self._tps()
        consumer = await self._consumer()
        try:
            found = await consumer.offsets_for_times({tp: stamp_ms for tp in tps})
            ends = await consumer.end_offsets(tps)
        finally:
            await consumer.stop()
        # Past the last stable offset the records are not decided yet: the next period has them.
        return {
            self._part(tp): min(ends[tp], found[tp].offset if found.get(tp) else ends[tp])
            for tp in tps
        }

    async def read(
        self, starts: Mapping[Part, int], stops: Mapping[Part, int]
    ) -> AsyncIterator[Record]:
        tps = await self._tps()
        deadline = time.monotonic() + READ_TIMEOUT_S
        for whole in (True, False):
            chosen = [tp for tp in tps if (self.names[tp.topic] in WHOLE_ROLES) == whole]
            chosen = [tp for tp in chosen if stops[self._part(tp)] > starts[self._part(tp)]]
            if not chosen:
                continue
            consumer = await self._consumer()
            try:
                consumer.assign(chosen)
                begins = {tp: starts[self._part(tp)] for tp in chosen}
                for tp, offset in begins.items():
                    consumer.seek(tp, offset)
                ends = {tp: stops[self._part(tp)] for tp in chosen}
                listener = ShareListener()  # assigned, not subscribed: never loses a share
                async for batch in _in_record_time(consumer, begins, ends, listener, deadline):
                    for r in batch:
                        yield _record(self.names[r.topic], r)
            finally:
                await consumer.stop()
