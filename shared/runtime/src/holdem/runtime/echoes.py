"""A service's own events taken back when they return on its inputs (issue 28).

Every service reads topics it also writes (the wallet its BetPlaced on the rounds topic, the
dealer and settlement their rounds' events). An event it published was built, and folded, from
an object it holds: when the exact bytes it published come back on the same topic under the same
key, that object is what parsing them would give, so it is taken back instead of validating the
bytes a second time. Matched by the exact bytes, never by an id: a record that differs in one
byte (another writer's, a forged one) is parsed and checked like any other. Each echo is taken
once; at most ``LIMIT`` wait (the oldest forgotten first: it is parsed when it comes, as before).
Only events whose bytes parse back to them are kept (``written_as_is``: not one written at an
older version during an upgrade)."""

from __future__ import annotations

from typing import Any

from holdem.core.contracts.records import written_as_is

LIMIT = 4_096  # a few poll batches of a service's own events on its inputs


class Echoes:
    """Published events by (topic, key, bytes), until they come back or are pushed out."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._waiting: dict[tuple[str, bytes, bytes], Any] = {}  # insertion order: oldest first

    def __len__(self) -> int:
        return len(self._waiting)

    def remember(self, topic: str, key: bytes, value: bytes, event: Any) -> None:
        """``event`` was published as ``value`` under ``key`` on ``topic``."""
        if not written_as_is(event):
            return
        waiting = self._waiting
        waiting.pop((topic, key, value), None)  # the same bytes again: the newest counts
        waiting[(topic, key, value)] = event
        if len(waiting) > self.limit:
            del waiting[next(iter(waiting))]

    def take(self, topic: str, key: bytes | None, value: bytes) -> Any | None:
        """The event published as exactly these bytes, once; None for anything else."""
        if key is None or not self._waiting:
            return None
        return self._waiting.pop((topic, key, value), None)

    def clear(self) -> None:
        self._waiting.clear()
