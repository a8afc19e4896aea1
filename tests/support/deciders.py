"""Given/when/then for pure deciders: fold past events, decide one message, compare the events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from holdem.core.contracts import Message
from holdem.core.decider import Context

S = TypeVar("S")

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def context_for(message: Message, now: datetime = NOW) -> Context:
    """The Context a runtime would build for ``message``: ids derived from its event_id."""
    return Context(now=now, cause_id=message.event_id, correlation_id=message.correlation_id)


@dataclass(frozen=True)
class Decider(Generic[S]):
    """The three functions of a service's pure core, as the runtime sees them."""

    initial_state: Callable[[], S]
    evolve: Callable[[S, Any], S]
    decide: Callable[[S, Any, Context], list[Any]]
    # A state is one mutable object that evolve updates in place (holdem.core.decider): with
    # ``copy`` set, ``when`` folds into a copy, so a test may branch several runs off one state.
    copy: Callable[[S], S] | None = None

    def given(self, events: Iterable[Message]) -> S:
        """The state after folding ``events`` in order, starting from the initial state."""
        state = self.initial_state()
        for event in events:
            state = self.evolve(state, event)
        return state

    def when(
        self, state: S, message: Message, now: datetime = NOW, *, fold_input: bool = True
    ) -> tuple[S, list[Any]]:
        """Handle ``message`` like the runtime: fold it, decide, then fold the decided events.

        ``fold_input=False`` for a message whose topic is not one of the service's state roles
        (e.g. a command): the runtime decides on it without folding it.
        """
        if self.copy is not None:
            state = self.copy(state)
        if fold_input:
            state = self.evolve(state, message)
        events = self.decide(state, message, context_for(message, now))
        for event in events:
            state = self.evolve(state, event)
        return state, events

    def run(self, history: Sequence[Message], message: Message) -> list[Any]:
        """``given(history)`` then ``when(message)``; returns only the decided events."""
        return self.when(self.given(history), message)[1]


def types_of(events: Iterable[Message]) -> list[str]:
    """The ``type`` of each event, for compact assertions."""
    return [getattr(event, "type", type(event).__name__) for event in events]
