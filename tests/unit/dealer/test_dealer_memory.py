"""The dealer's bounded memory (ADR 010): after 10,000 rounds it holds at most its bounds, a
recent command is recognised and an old one gets a typed refusal that changes nothing."""

from __future__ import annotations

from functools import cache

from support.dealer import DEALER, call, settled
from support.rounds import RoundEvents

from holdem.core.contracts import CommandRejected, Reason
from holdem.dealer.snapshot import dump_state, load_state
from holdem.dealer.state import CLOSED_KEPT, COMMANDS_KEPT, DealerState, Phase, evolve

ROUNDS = 10_000


@cache
def history(rounds: int = ROUNDS) -> DealerState:
    """The rounds topic of one player's 10,000 called and settled rounds, folded."""
    state = DEALER.initial_state()
    for n in range(rounds):
        game = RoundEvents(round_id=f"r{n}")
        for event in (
            game.bet_placed(),
            game.dealt(),
            game.called(command_id=f"c{n}"),
            settled(game),
        ):
            state = evolve(state, event)
    return state


def refusal_of(state: DealerState, command: object) -> tuple[Reason, str] | None:
    events = DEALER.when(state, command, fold_input=False)[1]  # type: ignore[arg-type]
    if not events:
        return None
    assert len(events) == 1 and isinstance(events[0], CommandRejected), events
    return events[0].reason, events[0].round_id


def test_after_10_000_rounds_the_state_holds_at_most_its_bounds() -> None:
    state = history()

    assert len(state.rounds) == CLOSED_KEPT and len(state.closed["p1"]) == CLOSED_KEPT
    assert len(state.commands) == COMMANDS_KEPT and len(state.used["p1"]) == COMMANDS_KEPT
    assert state.open == frozenset()
    assert state.get(f"r{ROUNDS - 1}").phase is Phase.SETTLED  # type: ignore[union-attr]


def test_a_resend_inside_the_window_answers_nothing_and_a_new_call_is_round_closed() -> None:
    state = history()
    last = f"r{ROUNDS - 1}"

    assert refusal_of(state, call(last, command_id=f"c{ROUNDS - 1}")) is None
    assert refusal_of(state, call(last, command_id="new")) == (Reason.ROUND_CLOSED, last)


def test_a_command_after_the_window_gets_unknown_round_and_changes_nothing() -> None:
    state = history()

    assert refusal_of(state, call("r0", command_id="c0")) == (Reason.UNKNOWN_ROUND, "r0")
    assert refusal_of(state, call("r0", command_id="new")) == (Reason.UNKNOWN_ROUND, "r0")
    after, _ = DEALER.when(state, call("r0", command_id="c0"), fold_input=False)
    assert after.rounds == state.rounds and after.open == state.open


def test_forgotten_rounds_are_the_oldest_closed_ones_never_an_open_one() -> None:
    state = history()
    game = RoundEvents(round_id="open")
    state = evolve(evolve(state, game.bet_placed()), game.dealt())
    for n in range(CLOSED_KEPT + 1):
        other = RoundEvents(player_id="p1", round_id=f"more{n}")
        for event in (other.bet_placed(), other.dealt(), other.called(), settled(other)):
            state = evolve(state, event)

    assert state.open == {"open"} and state.get("open").phase is Phase.DEALT  # type: ignore[union-attr]
    assert state.get("more0") is None and state.get(f"more{CLOSED_KEPT}") is not None


def test_the_snapshot_stays_the_same_size_from_1_000_to_10_000_rounds() -> None:
    state = history()
    small, large = dump_state(history(1_000)), dump_state(state)

    assert len(large) <= len(small) * 1.05  # the round ids are a character longer
    assert load_state(large) == state
