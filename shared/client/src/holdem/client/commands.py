"""Commands as the SDK builds them: idempotency keys generated or given, and where each lands.

Every command is a record on the commands topic keyed by ``player_id`` (UTF-8). The SDK sends it
through aiokafka's default partitioner (``murmur2``, the same as Java's and librdkafka's
``murmur2_random``; librdkafka's default ``consistent_random`` is another hash), so it lands
where ``holdem.core.wire.partitioning.partition_for`` says, which is what the services check.

>>> partition_for("foobar", 3)
0
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, TypeVar

from holdem.core.contracts import Command
from holdem.core.wire.partitioning import partition_for, partition_for_key

__all__ = ["command", "new_id", "partition_for", "partition_for_key"]

C = TypeVar("C", bound=Command)


def new_id() -> str:
    """A fresh random id (32 hex digits) for an ``event_id``, ``command_id`` or ``round_id``."""
    return uuid.uuid4().hex


def command(
    model: type[C],
    player_id: str,
    *,
    command_id: str | None = None,
    event_id: str | None = None,
    **fields: Any,
) -> C:
    """A command with its envelope filled in. ``command_id`` is the idempotency key: give your
    own (e.g. your platform's transaction id) to make a resend safe across your restarts; the
    same id with the same body has one effect, with another body a ``duplicate`` rejection.
    ``event_id`` identifies this record; both are generated when not given.

    >>> from holdem.core.contracts import Deposit
    >>> d = command(Deposit, "alice", command_id="tx-1", currency="EUR", amount=10_000)
    >>> d.command_id, d.player_id, d.amount, len(d.event_id)
    ('tx-1', 'alice', 10000, 32)
    """
    return model(
        event_id=event_id or new_id(),
        command_id=command_id or new_id(),
        player_id=player_id,
        occurred_at=datetime.now(UTC),
        **fields,
    )
