"""Settlement test vocabulary: its decider as the runtime drives it, and a round's state."""

from __future__ import annotations

from holdem.settlement.decide import decide
from holdem.settlement.state import RoundState, SettlementState, evolve, initial_state
from support.deciders import Decider

SETTLEMENT = Decider[SettlementState](initial_state, evolve, decide)


def round_of(state: SettlementState, player_id: str = "p1", round_id: str = "r1") -> RoundState:
    """The round's state, which the test expects to exist."""
    found = state.round(player_id, round_id)
    assert found is not None, f"settlement knows no round {player_id}/{round_id}"
    return found
