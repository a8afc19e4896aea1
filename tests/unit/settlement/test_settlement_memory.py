"""Settlement's bounded memory (ADR 010): after 10,000 rounds it holds at most its bounds."""

from __future__ import annotations

from functools import cache

from support.rounds import RoundEvents
from support.settlement import SETTLEMENT

from holdem.core.contracts import RoundVoided
from holdem.settlement.snapshot import dump_state, load_state
from holdem.settlement.state import CLOSED_KEPT, HISTORY_LIMIT, SettlementState, evolve

ROUNDS = 10_000


def void_of(game: RoundEvents) -> RoundVoided:
    return RoundVoided(**game.envelope("voided", 3), malfunction_id="m", reason="watchdog: late")


@cache
def history(rounds: int = ROUNDS) -> SettlementState:
    """One player's 10,000 rounds: the first ones settled, the others voided before a deal."""
    state = SETTLEMENT.initial_state()
    for n in range(rounds):
        game = RoundEvents(round_id=f"r{n}")
        if n < 3:
            for event in game.played():
                state, _ = SETTLEMENT.when(state, event)
            continue
        for event in (game.bet_placed(), void_of(game)):
            state = evolve(state, event)
    return state


def test_after_10_000_rounds_the_state_holds_at_most_its_bounds() -> None:
    state = history()

    assert len(state.rounds) == CLOSED_KEPT and len(state.ended["p1"]) == CLOSED_KEPT
    assert len(state.recent("p1")) == HISTORY_LIMIT and state.open_rounds == 0
    assert state.recent("p1")[0].round_id == f"r{ROUNDS - 1}"


def test_a_late_event_of_a_recent_round_is_recognised_as_ended() -> None:
    state = history()
    game = RoundEvents(round_id=f"r{ROUNDS - 1}")

    for event in (game.dealt(), game.called(), game.malfunction()):
        after, events = SETTLEMENT.when(state, event)
        assert events == [] and after.open_rounds == 0


def test_the_snapshot_stays_the_same_size_from_1_000_to_10_000_rounds() -> None:
    state = history()
    small, large = dump_state(history(1_000)), dump_state(state)

    assert len(large) <= len(small) * 1.05  # the round ids are a character longer
    assert load_state(large) == state
