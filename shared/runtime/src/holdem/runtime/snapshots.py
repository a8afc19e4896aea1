"""Per-partition snapshots of a service's state on a compacted topic of its own, so that a start
or an assignment loads the latest one and replays only the tail of the log (ADR 013).

A snapshot record sits on the same partition number as the state it covers, keyed by that
number, and carries the offsets of the state topics it covers: an input topic's next offset to
consume (what is beyond it is read again, in order, and folded again, which evolve allows), a
state-only topic's last stable offset (the service is its only writer and folded all it wrote).
It is written inside a batch's transaction, so it commits with the offsets it names.

A snapshot bigger than CHUNK_BYTES (a producer request is 1 MB at most) is written as parts,
keyed ``<partition>.<part>`` so that compaction keeps each, in one transaction: the last record
of a partition is then its final part, and the parts before it are the records just before it.

Two bodies are read (ADR 048): format 1, a JSON object holding the state as a JSON string, and
format 3, a JSON header line (the same fields but the state) followed by the state compressed
with zlib: 3.5 to 11 times fewer bytes (the services' states, ADR 048). Which one is written is
``HOLDEM_SNAPSHOT_COMPRESSION`` (none: format 1, which every earlier release reads)."""

from __future__ import annotations

import base64
import hashlib
import json
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from holdem.core.wire.connection import KafkaConnection, start_or_close

FORMAT = 1
PARTS_FORMAT = 2  # one part of a snapshot written in parts
ZLIB_FORMAT = 3  # a header line, then the state compressed with zlib (ADR 048)
ZLIB_LEVEL = 1  # zlib's fastest: a JSON state shrinks about tenfold already
CHUNK_BYTES = 512 * 1024  # a part's share of the body: 683 KiB in base64, under a 1 MB request
MAX_PARTS = 4096  # 2 GiB: a state this big is a defect, not a snapshot
MAX_STATE_BYTES = MAX_PARTS * CHUNK_BYTES  # what a compressed state may inflate to, at most
LOOK_BACK = 64  # records read back from a partition's end to find its latest snapshot
READ_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Codec:
    """A service's state to bytes and back (its ``holdem.<service>.snapshot`` module)."""

    dump: Callable[[Any], bytes]
    load: Callable[[bytes], Any]


class SnapshotFormatError(ValueError):
    """A snapshot record that is not one of ours for this partition."""


@dataclass(frozen=True)
class Snapshot:
    service: str
    partition: int
    offsets: dict[str, int]  # state topic -> the offset its replay starts from
    state: bytes
    # The runtime's own memory beside the service's state: the brand of each open round (ADR
    # 021), "player_id/round_id" -> brand. Optional in the body: a snapshot without it (written
    # before ADR 021) loads with none, and an older reader ignores it (same format).
    brands: dict[str, str] = field(default_factory=dict)

    def to_bytes(self, compressed: bool = False) -> bytes:
        """The snapshot's body: format 1, or format 3 when ``compressed``."""
        body: dict[str, Any] = {
            "format": ZLIB_FORMAT if compressed else FORMAT,
            "service": self.service,
            "partition": self.partition,
            "offsets": self.offsets,
        }
        if self.brands:
            body["brands"] = self.brands
        if compressed:
            head = json.dumps(body, separators=(",", ":")).encode()
            return head + b"\n" + zlib.compress(self.state, ZLIB_LEVEL)
        body["state"] = self.state.decode()
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, raw: bytes, service: str, partition: int) -> Snapshot:
        try:
            head, _, rest = raw.partition(b"\n")  # format 1 is one line: no newline
            body = json.loads(head)
            written = body.get("format")
            if written not in (FORMAT, ZLIB_FORMAT):
                raise SnapshotFormatError(
                    f"snapshot of format {written!r} where {FORMAT} or {ZLIB_FORMAT} was expected"
                )
            state = _inflated(rest) if written == ZLIB_FORMAT else body["state"].encode()
            offsets = {str(t): int(o) for t, o in body["offsets"].items()}
            brands = {str(k): str(v) for k, v in body.get("brands", {}).items()}
            snapshot = cls(body["service"], int(body["partition"]), offsets, state, brands)
        except SnapshotFormatError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, zlib.error) as error:
            raise SnapshotFormatError(f"unreadable snapshot: {error!r}") from error
        if (snapshot.service, snapshot.partition) != (service, partition):
            raise SnapshotFormatError(
                f"snapshot of {snapshot.service}/{snapshot.partition} (format {written}) where "
                f"{service}/{partition} was expected"
            )
        if any(o < 0 for o in offsets.values()):
            raise SnapshotFormatError("negative offset in a snapshot")
        return snapshot

    def to_records(self, compressed: bool = False) -> list[tuple[bytes, bytes]]:
        """(key, value) of the records that carry this snapshot, in the order to write them."""
        body = self.to_bytes(compressed)
        if len(body) <= CHUNK_BYTES:
            return [(str(self.partition).encode(), body)]
        pieces = [body[i : i + CHUNK_BYTES] for i in range(0, len(body), CHUNK_BYTES)]
        if len(pieces) > MAX_PARTS:
            raise SnapshotFormatError(f"a {len(body)} byte snapshot: over {MAX_PARTS} parts")
        ident = hashlib.sha256(body).hexdigest()[:32]
        return [
            (
                f"{self.partition}.{i}".encode(),
                json.dumps(
                    {
                        "format": PARTS_FORMAT,
                        "service": self.service,
                        "partition": self.partition,
                        "id": ident,
                        "part": i,
                        "parts": len(pieces),
                        "data": base64.b64encode(piece).decode(),
                    },
                    separators=(",", ":"),
                ).encode(),
            )
            for i, piece in enumerate(pieces)
        ]

    def starts(self) -> dict[TopicPartition, int]:
        return {TopicPartition(t, self.partition): o for t, o in self.offsets.items()}


def _inflated(data: bytes) -> bytes:
    """A format 3 body's state: ``data`` inflated, whole and nothing after it, and at most
    MAX_STATE_BYTES (a record that inflates past that is refused, not held)."""
    inflater = zlib.decompressobj()
    state = inflater.decompress(data, MAX_STATE_BYTES)
    if not inflater.eof or inflater.unconsumed_tail or inflater.unused_data:
        raise SnapshotFormatError("a compressed state that is cut short, too big or followed")
    return state


def _header(raw: bytes) -> Any:
    """A record's JSON: a whole record's (formats 1 and 2) or its first line's (format 3)."""
    return json.loads(raw.partition(b"\n")[0])


def parts_needed(raw: bytes) -> int:
    """How many records, ending with ``raw``, hold the snapshot whose last record is ``raw``:
    1 for a whole snapshot (or anything unreadable: ``Snapshot.from_bytes`` says why)."""
    try:
        body = _header(raw)
        if body.get("format") == PARTS_FORMAT:
            return max(1, min(int(body["parts"]), MAX_PARTS))
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return 1


def assemble(values: list[bytes]) -> bytes:
    """The snapshot body from the records ending with its last part (earlier records, other
    snapshots' parts, are ignored); a whole snapshot is returned as it is. ``SnapshotFormatError``
    when parts are missing or do not match the body they claim (its digest)."""
    try:
        last = _header(values[-1])
    except ValueError as error:
        raise SnapshotFormatError(f"unreadable snapshot: {error!r}") from error
    if not isinstance(last, dict) or last.get("format") != PARTS_FORMAT:
        return values[-1]
    pieces: dict[int, bytes] = {}
    for raw in values:
        try:
            part = _header(raw)
            if isinstance(part, dict) and part.get("id") == last["id"]:
                pieces[int(part["part"])] = base64.b64decode(part["data"], validate=True)
        except (ValueError, KeyError, TypeError):
            continue  # not a part of this snapshot: a missing part is found below
    parts = int(last["parts"])
    if sorted(pieces) != list(range(parts)):
        raise SnapshotFormatError(f"snapshot {last['id']}: {len(pieces)} of {parts} parts found")
    body = b"".join(pieces[i] for i in range(parts))
    if hashlib.sha256(body).hexdigest()[:32] != last["id"]:
        raise SnapshotFormatError(f"snapshot {last['id']}: its parts do not make its body")
    return body


async def latest(
    connection: KafkaConnection, topic: str, partitions: list[int]
) -> dict[int, bytes]:
    """The latest snapshot of each partition of ``topic``, if any: its last committed record, or
    the parts that end with it, joined (``b""`` when they cannot be: a full replay follows)."""
    if not partitions:  # a member assigned nothing: aiokafka's stop after assign([]) hangs
        return {}
    consumer = AIOKafkaConsumer(
        **connection.kwargs(), group_id=None, enable_auto_commit=False,
        isolation_level="read_committed",
    )  # fmt: skip
    await start_or_close(consumer)
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        begins = await consumer.beginning_offsets(tps)
        found: dict[int, bytes] = {}
        deadline = time.monotonic() + READ_TIMEOUT_S

        async def read(tp: TopicPartition, start: int) -> list[tuple[int, bytes]]:
            consumer.seek(tp, max(begins[tp], start))
            values: list[tuple[int, bytes]] = []
            while await consumer.position(tp) < ends[tp]:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"snapshot topic {topic} not read in {READ_TIMEOUT_S}s")
                for record in (await consumer.getmany(tp, timeout_ms=500)).get(tp, []):
                    if record.offset < ends[tp] and record.value is not None:
                        values.append((record.offset, record.value))
            return values

        for tp in tps:
            if ends[tp] <= begins[tp]:
                continue
            values = await read(tp, ends[tp] - LOOK_BACK)
            if not values:
                continue
            offset, last = values[-1]
            parts = parts_needed(last)
            if parts > 1:  # its parts are the records just before it (one transaction)
                values = await read(tp, offset - parts - 2)
            try:
                found[tp.partition] = assemble([value for _, value in values])
            except SnapshotFormatError:
                found[tp.partition] = b""  # unusable: Snapshot.from_bytes refuses it
        return found
    finally:
        await consumer.stop()
