"""The dead letter: a record a service answers for but cannot act on becomes one
``MessageRejected`` on the rejected topic, with its reason and its source coordinates, and the
offset moves on. It is built only from checked or truncated parts, so building it cannot fail.
A decision that raised (a poison message) is dead-lettered too, with what the service says
besides (its ``Spec.on_failure``: a rounds writer's Malfunction of the round)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from holdem.core.contracts.base import Envelope, Reason, RecordReason
from holdem.core.contracts.records import ADMIN_TYPES, COMMAND_TYPES
from holdem.core.contracts.rejected import RAW_LIMIT, MessageRejected
from holdem.core.decider import Context
from holdem.core.wire.ids import ID
from holdem.runtime.ingress import Origin


def answers_for(
    role: str, raw: bytes, commands: Collection[str], rejects_unreadable: Collection[str]
) -> bool:
    """Whether this service answers for a bad record of ``role`` (one service per record: the
    command's owner, or the service named for that topic)."""
    if role in ("commands", "admin"):
        kind = lenient_field(raw, "type")
        if kind in COMMAND_TYPES | ADMIN_TYPES:
            return kind in commands
    return role in rejects_unreadable


def rejection(
    service: str,
    ctx: Context,
    origin: Origin,
    reason: Reason | RecordReason,
    detail: str,
    player_hint: str | None = None,
) -> MessageRejected:
    """The dead letter of one record. Keyed by the record's key when it is an id (the sender
    reads that partition), else by the body's player_id, else "unknown"."""
    key = origin.key.decode("utf-8", errors="replace") if origin.key is not None else None
    if player_hint is None:
        player_hint = lenient_field(origin.raw, "player_id")
    player = safe_id(key) or safe_id(player_hint) or "unknown"
    return MessageRejected(
        **ctx.envelope(player),
        service=service,
        reason=reason,
        detail=detail[:2000],
        source_topic=origin.topic[:255],
        source_partition=origin.partition,
        source_offset=origin.offset,
        source_key=None if key is None else key[:400],
        raw=origin.raw.decode("utf-8", errors="replace")[:4000],
        raw_base64=base64.b64encode(origin.raw[:RAW_LIMIT]).decode(),
        raw_size=len(origin.raw),
    )


def poisoned(
    service: str,
    ctx: Context,
    message: Envelope,
    origin: Origin,
    error: Exception,
    also: Callable[[Context, Any, Exception], Sequence[Envelope]] | None = None,
) -> list[Envelope]:
    """What a decision that raised leaves behind: its input dead-lettered, and what the service
    says besides (``also``, its ``Spec.on_failure``: a rounds writer reports the round broken)."""
    detail = f"{type(error).__name__}: {error}"
    events: list[Envelope] = [
        rejection(service, ctx, origin, Reason.PROCESSING_FAILED, detail, message.key)
    ]
    if also is not None:
        events.extend(also(ctx, message, error))
    return events


def lenient_field(raw: bytes, name: str) -> str | None:
    """A top-level text field of a body that may not parse."""
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    found = value.get(name) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def safe_id(text: str | None) -> str | None:
    """``text`` if it is an id of the contracts' alphabet, else None."""
    return text if text is not None and ID.fullmatch(text) else None
