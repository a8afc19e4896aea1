"""A toy service for testing the shared runtime: answers each Call with one Malfunction, once."""

from __future__ import annotations

from typing import Any

from holdem.core.contracts import Call, Malfunction, Message, RoundVoided
from holdem.core.contracts.rounds import broken_round
from holdem.core.decider import Context
from holdem.runtime.processor import Spec


def evolve(state: set[str], event: Any) -> set[str]:
    if isinstance(event, Malfunction | RoundVoided):
        state.add(event.round_id)
    return state


def decide(state: set[str], message: Any, ctx: Context) -> list[Message]:
    if not isinstance(message, Call) or message.round_id in state:
        return []
    if message.round_id == "poison":
        raise RuntimeError("this round always breaks the decider")
    return [
        Malfunction(**ctx.envelope(message.player_id, message.round_id), source="toy", reason="x")
    ]


TOY = Spec[set[str]](
    name="toy",
    initial_state=set,
    evolve=evolve,
    decide=decide,
    inputs=("commands",),
    state_roles=("rounds",),
    outputs=("rounds",),
    commands=frozenset({"command.call"}),
    rejects_unreadable=frozenset({"commands"}),
    on_failure=broken_round("toy"),
)
