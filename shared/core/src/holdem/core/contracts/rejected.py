"""``holdem.rejected``: input that could not be read or processed, with its origin and reason."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from holdem.core.contracts.base import Message, Reason


class MessageRejected(Message):
    TOPIC: ClassVar[str] = "rejected"
    type: Literal["rejected.message"] = "rejected.message"
    version: Literal[1] = 1
    service: str
    reason: Reason
    detail: str = Field(max_length=2000)
    source_topic: str
    source_partition: int
    source_offset: int
    raw: str = Field(max_length=4000)  # the record's value, decoded leniently and truncated
