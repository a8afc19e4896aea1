"""How a service's pure core is shaped, and what it needs from the outside world (time, ids,
causality), handed in by the handler.

A decider is ``decide(state, message, ctx) -> list of events`` and ``evolve(state, event) ->
state``, functions of their arguments alone: they never read a clock or make a random id; the
handler builds a ``Context`` for the message it is handling. Event ids are derived from the input's
``seed`` (the runtime uses the record's topic, partition and offset, which no client can choose)
or else from the cause, so the same input decided twice yields the same ids (duplicates are
recognisable downstream) and two inputs can never be made to share one.

One state discipline, every service's: **the state of a partition is one mutable object, owned
by that partition; ``evolve`` folds an event into it in place and returns that same object;
``decide`` only reads it, and never mutates it or anything in it.** What a decision needs to
know of events it is about to publish (not folded yet) it works out without folding them, from
the values in the state or the events it decided so far. A value kept in the state may be a
frozen record replaced whole on change (a dealer ``Round``, a settlement ``RoundState``, a
contract message) or a small mutable one updated in place (a wallet ``Account``); a reader must
not keep a reference to a mutable part past the decision. Why mutable: the consumer loop folds
every record of every batch, and a replay or a start folds the whole log, so a fold must cost
what the event changes, not a copy of what the state holds; the runtime never needs an older
state back (a failed transaction is rebuilt from the snapshot and the log: ``loop.py``), and
``evolve`` is idempotent (folding an event twice, as replay may, changes nothing more).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

_NAMESPACE = uuid.UUID("6f1c9f5e-3f59-4d5e-9a51-0c2b8e7d4a10")
_NAMESPACE_BYTES = _NAMESPACE.bytes
T = TypeVar("T")


def uuid5_text(namespace: bytes, name: str) -> str:
    """``str(uuid.uuid5(UUID(bytes=namespace), name))`` straight from hashlib: the same text
    (RFC 4122's name-based SHA-1 id) without building a ``UUID`` (issue 28: ids are made for
    every event).

    >>> space = uuid.UUID("6f1c9f5e-3f59-4d5e-9a51-0c2b8e7d4a10")
    >>> names = ["", "e1/1", "holdem.commands/0/7/2", "é☃", "x" * 300]
    >>> all(uuid5_text(space.bytes, n) == str(uuid.uuid5(space, n)) for n in names)
    True
    """
    digest = bytearray(hashlib.sha1(namespace + name.encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass
class Context:
    """Time and identity for the events decided in answer to one input message."""

    now: datetime
    cause_id: str
    correlation_id: str | None = None
    seed: str | None = None  # what event ids derive from; None: the cause_id
    # When the pipeline last resumed after it could not make progress (a start, a rebuild, a
    # broker it could not reach): time-based judgements count from it at the earliest, so an
    # outage delays a timeout instead of spending it. None: no such moment known.
    resumed_at: datetime | None = None
    _issued: int = field(default=0, repr=False)

    def next_id(self) -> str:
        """A deterministic id: the n-th event decided for this input.

        >>> from datetime import UTC
        >>> now = datetime(2026, 1, 1, tzinfo=UTC)
        >>> a = Context(now, cause_id="e1", seed="holdem.commands/0/7").next_id()
        >>> b = Context(now, cause_id="e1", seed="holdem.commands/0/8").next_id()
        >>> a == b  # one client event_id sent twice still gives distinct ids
        False
        """
        self._issued += 1
        return uuid5_text(_NAMESPACE_BYTES, f"{self.seed or self.cause_id}/{self._issued}")

    def envelope(self, player_id: str, round_id: str | None = None) -> dict[str, Any]:
        """The envelope fields of a new event caused by this context's input.

        >>> from datetime import UTC
        >>> ctx = Context(datetime(2026, 1, 1, tzinfo=UTC), cause_id="c1")
        >>> env = ctx.envelope("p1", "r1")
        >>> same = Context(ctx.now, "c1").next_id()
        >>> env["causation_id"], env["round_id"], env["event_id"] == same
        ('c1', 'r1', True)
        """
        return {
            "event_id": self.next_id(),
            "player_id": player_id,
            "round_id": round_id,
            "occurred_at": self.now,
            "causation_id": self.cause_id,
            "correlation_id": self.correlation_id or self.cause_id,
        }


class ByClass(Generic[T]):
    """What a fold does with a message, chosen by the message's class: the value of the first of
    ``routes`` (a class or a union of classes, and a value) the message is an instance of, else
    ``default``. Which one depends on the class alone, so it is found once per class and then
    looked up: a fold's chain of ``isinstance`` checks, made for every record a replay reads,
    cost more than the fold itself (issue 28).

    >>> route = ByClass([(int, "number"), (str | bytes, "text")], "other")
    >>> route(True), route(b"x"), route(1.5), route(2)
    ('number', 'text', 'other', 'number')
    """

    def __init__(self, routes: Sequence[tuple[Any, T]], default: T) -> None:
        self._routes = tuple(routes)
        self._default = default
        self._found: dict[type, T] = {}

    def __call__(self, message: object) -> T:
        try:
            return self._found[type(message)]
        except KeyError:
            pass
        found = next((v for kind, v in self._routes if isinstance(message, kind)), self._default)
        self._found[type(message)] = found
        return found
