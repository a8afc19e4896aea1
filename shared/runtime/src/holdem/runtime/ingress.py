"""The checks a record passes before a service acts on it: where it came from, whether it is
worth parsing, and whether its headers, key and partition are what its body says.

A record that fails a check was never acted on; the service that answers for it dead-letters it
(``holdem.runtime.dead_letter``)."""

from __future__ import annotations

import uuid
from typing import NamedTuple

from holdem.core.contracts.base import Envelope, Message, RecordReason
from holdem.core.decider import uuid5_text
from holdem.core.wire.headers import Stamp
from holdem.core.wire.partitioning import partition_for_key

_RECORDS = uuid.UUID("3d1f0c8e-5b7a-4c2e-9f61-7a0e2b4c9d13")
_RECORDS_BYTES = _RECORDS.bytes
Refusal = tuple[RecordReason, str]


class Origin(NamedTuple):
    """Where a record came from: what a rejection names, and what output ids derive from."""

    topic: str
    partition: int
    offset: int
    raw: bytes
    key: bytes | None = None

    @property
    def seed(self) -> str:
        return f"{self.topic}/{self.partition}/{self.offset}"

    @property
    def cause_id(self) -> str:
        """An Id (the contracts' pattern, 64 characters at most) naming this record."""
        return uuid5_text(_RECORDS_BYTES, self.seed)


def wanted(reads: frozenset[str] | None, kind: bytes | None) -> bool:
    """Whether a record is worth parsing: its ``type`` header (when it has one) names a message
    the service reads. The header only saves work; the body decides."""
    return reads is None or kind is None or kind.decode(errors="replace") in reads


def header_refusal(stamp: Stamp, operator: str) -> Refusal | None:
    """Why a record's headers refuse it (ADR 021): unreadable, or another operator's. A record
    without an operator header is accepted (clients from before the headers)."""
    problem = stamp.problem()
    if problem is not None:
        return RecordReason.BAD_HEADER, problem
    if stamp.operator is not None and stamp.operator != operator:
        return (
            RecordReason.WRONG_OPERATOR,
            f"operator header {stamp.operator[:80]!r}, but this deployment serves {operator!r}",
        )
    return None


def key_refusal(
    message: Envelope, key: bytes | None, partition: int, partitions: int | None
) -> Refusal | None:
    """Why a readable record is still not what it claims: its key (the body's ``key``: a
    player's ``player_id``, a table's ``table_id``), or its partition (``partitions`` None:
    not checked)."""
    if key is None or key != message.key.encode():
        shown = "no key" if key is None else f"key {key[:80]!r}"
        name = "player_id" if isinstance(message, Message) else "table_id"
        return RecordReason.KEY_MISMATCH, f"{shown} but {name} {message.key!r}"
    if partitions is not None:
        expected = partition_for_key(key, partitions)
        if partition != expected:
            return (
                RecordReason.WRONG_PARTITION,
                f"partition {partition}, but murmur2 puts key {message.key!r} on "
                f"{expected} of {partitions}",
            )
    return None
