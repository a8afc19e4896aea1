"""What waits for the game's answers: a ``Watch`` gets the committed events of one round or
one command as the ``Operator`` routes them; ``Sender`` is what the command helpers
(promotions, protection) need of the operator: send, watch, forget."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from holdem.core.contracts import Command, Envelope, Message, RoundVoided, Settled

TERMINAL: tuple[type[Message], ...] = (Settled, RoundVoided)


class StalledError(TimeoutError):
    """An expected event did not arrive within its bound."""


@dataclass
class Watch:
    """The events of one round (or one command) as they arrive, for one waiter."""

    key: str
    queue: asyncio.Queue[Message] = field(default_factory=asyncio.Queue)
    seen: list[Message] = field(default_factory=list)
    _passed: list[Message] = field(default_factory=list)  # arrived, not yet asked for

    async def until(self, *kinds: type[Envelope], within_s: float) -> Message:
        """The next event of one of ``kinds``; a terminal event of the round always ends the
        wait, since nothing follows it. Events of other kinds are kept for later waits (the
        rounds and wallet topics are not ordered between them). StalledError after
        ``within_s`` seconds."""
        wanted = (*kinds, *TERMINAL)
        for index, event in enumerate(self._passed):
            if isinstance(event, wanted):
                return self._passed.pop(index)
        try:
            async with asyncio.timeout(within_s):
                while True:
                    event = await self.queue.get()
                    self.seen.append(event)
                    if isinstance(event, wanted):
                        return event  # a table's answer too (an Envelope)
                    self._passed.append(event)
        except TimeoutError:
            names = ", ".join(kind.__name__ for kind in kinds)
            got = [type(e).__name__ for e in self.seen]
            raise StalledError(f"{self.key}: no {names} in {within_s:.0f}s (saw {got})") from None


class Sender(Protocol):
    """The operator as the command helpers use it (``holdem.client.operator.Operator``)."""

    def watch(self, key: str) -> Watch: ...
    def forget(self, key: str) -> None: ...
    async def send(self, command: Command, *, brand: str | None = None) -> None: ...
