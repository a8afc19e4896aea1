"""Tables as data (ADR 018): the admin's commands on ``holdem.admin`` and the table events on
``holdem.tables``, both keyed by ``table_id``.

A table event carries the table's whole terms and its version (1, 2, ...), so the latest event
of a table is all a reader needs; a bet records the version and the terms it was played under.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from holdem.core.contracts.base import (
    INPUT,
    Amount,
    Currency,
    Envelope,
    Id,
    Mode,
    PositiveAmount,
    Reason,
    Timestamp,
)

MAX_CHIPS = 12  # denominations per table: bounds the chip check (holdem.core.chips)
MAX_DECISION_TIMEOUT_S = 3_600
MAX_IDLE_TIMEOUT_S = 7 * 24 * 3_600
MAX_HISTORY = 100
PayTableVersion = Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]{1,32}$")]
TableVersion = Annotated[int, Field(strict=True, ge=1, le=10**9)]


class TimeoutPolicy(StrEnum):
    """How a round whose player did not decide in time is completed (RULES.md)."""

    FOLD = "fold"
    CALL = "call"
    OPTIMAL = "optimal"  # the decision with the higher expected value


class OffChips(StrEnum):
    """What the table does with a bet that is not a sum of its chips."""

    REJECT = "reject"  # refused with reason not_chips
    ADJUST = "adjust"  # lowered to the largest chip sum below it (reported as adjusted)


class TableTerms(BaseModel):
    """Everything a table decides about a round, in minor units and seconds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    operator_id: Id
    currency: Currency
    ante_min: PositiveAmount
    ante_max: PositiveAmount
    bonus_max: Amount
    chips: tuple[PositiveAmount, ...] = Field(min_length=1, max_length=MAX_CHIPS)
    off_chips: OffChips = OffChips.REJECT
    decision_timeout_s: int = Field(default=30, strict=True, ge=1, le=MAX_DECISION_TIMEOUT_S)
    timeout_policy: TimeoutPolicy = TimeoutPolicy.FOLD
    idle_timeout_s: int = Field(default=900, strict=True, ge=1, le=MAX_IDLE_TIMEOUT_S)
    mode: Mode = Mode.REAL
    pay_table: PayTableVersion = "standard-1"
    history_length: int = Field(default=10, strict=True, ge=1, le=MAX_HISTORY)

    @model_validator(mode="after")
    def _consistent(self) -> TableTerms:
        if self.ante_min > self.ante_max:
            raise ValueError(f"ante_min {self.ante_min} is above ante_max {self.ante_max}")
        if len(set(self.chips)) != len(self.chips):
            raise ValueError("chip denominations must be distinct")
        return self


class TableMessage(Envelope):
    """A table's command or event: keyed by ``table_id``, never by a player."""

    table_id: Id
    occurred_at: Timestamp
    causation_id: Id | None = None
    correlation_id: Id | None = None

    @property
    def key(self) -> str:
        return self.table_id


class TableCommand(TableMessage):
    """Admin → us on ``holdem.admin``; ``command_id`` is the idempotency key (per table)."""

    model_config = INPUT  # unknown fields refused (ADR 038)

    TOPIC: ClassVar[str] = "admin"
    OWNER: ClassVar[str] = "wallet"  # it keeps the table book (ADR 018)
    command_id: Id


class CreateTable(TableCommand):
    type: Literal["admin.create_table"] = "admin.create_table"
    version: Literal[1] = 1
    terms: TableTerms


class ChangeTable(TableCommand):
    """Replace the terms of open table ``table_id``, at version ``expected_version`` (else
    stale_version): the new terms apply to rounds bet after the change."""

    type: Literal["admin.change_table"] = "admin.change_table"
    version: Literal[1] = 1
    expected_version: TableVersion
    terms: TableTerms


class CloseTable(TableCommand):
    """No new round at the table; rounds already bet finish under their terms."""

    type: Literal["admin.close_table"] = "admin.close_table"
    version: Literal[1] = 1
    expected_version: TableVersion


class TableEvent(TableMessage):
    TOPIC: ClassVar[str] = "tables"
    command_id: Id
    fingerprint: str = Field(pattern=r"^[0-9a-f]{32}$")  # of the command's body
    table_version: TableVersion
    terms: TableTerms


class TableOpened(TableEvent):
    type: Literal["table.opened"] = "table.opened"
    version: Literal[1] = 1


class TableChanged(TableEvent):
    type: Literal["table.changed"] = "table.changed"
    version: Literal[1] = 1


class TableClosed(TableEvent):
    type: Literal["table.closed"] = "table.closed"
    version: Literal[1] = 1


class TableRejected(TableMessage):
    """An admin command refused; no table changed."""

    TOPIC: ClassVar[str] = "tables"
    type: Literal["table.rejected"] = "table.rejected"
    version: Literal[1] = 1
    command_id: Id
    command_type: str = Field(max_length=64)
    reason: Reason
    detail: str = Field(default="", max_length=500)
