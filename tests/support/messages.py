"""Builders of wire messages for tests: envelope filled in, ids unique unless given."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from holdem.core.contracts import Message


def envelope(player_id: str = "p1", **fields: Any) -> dict[str, Any]:
    return {
        "event_id": fields.pop("event_id", uuid.uuid4().hex),
        "player_id": player_id,
        "occurred_at": fields.pop("occurred_at", datetime.now(UTC)),
        **fields,
    }


def command(model: type[Message], player_id: str = "p1", **fields: Any) -> Any:
    """A command with a fresh command_id unless one is given."""
    fields.setdefault("command_id", uuid.uuid4().hex)
    return model(**envelope(player_id, **fields))
