"""``holdem.rejected``, the dead-letter topic: input that could not be read or processed, with
its origin, its exact bytes and the reason."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from holdem.core.contracts.base import Message, Reason, RecordReason

RAW_LIMIT = 65536  # bytes of a dead record kept exactly (base64); Kafka's default max is 1 MiB


class MessageRejected(Message):
    """v2: the record's key, its exact bytes (base64) and the record-level reasons
    (key_mismatch, wrong_partition) were added. v3: Reason gained the table, chip, rebet and
    mode codes (ADR 018). v4: RecordReason gained ``wrong_operator`` and ``bad_header``, the
    record's operator and brand headers (ADR 021)."""

    TOPIC: ClassVar[str] = "rejected"
    type: Literal["rejected.message"] = "rejected.message"
    version: Literal[2, 3, 4] = 4
    service: str
    reason: Reason | RecordReason
    detail: str = Field(max_length=2000)
    source_topic: str = Field(max_length=255)
    source_partition: int = Field(ge=0)
    source_offset: int = Field(ge=0)
    source_key: str | None = Field(default=None, max_length=400)  # decoded leniently
    raw: str = Field(max_length=4000)  # the record's value, decoded leniently and truncated
    raw_base64: str = Field(default="", max_length=4 * RAW_LIMIT // 3 + 4)  # exact, capped
    raw_size: int = Field(default=0, ge=0)  # the value's length in bytes
