"""The dealer's fold: phases only move forward and re-applied events change nothing."""

from __future__ import annotations

from support.dealer import DEALER, GAME, call, sealed, settled, unseal, void_round
from support.deciders import NOW

from holdem.dealer.state import DealerState, Phase, evolve, initial_state


def fold_all(events: list[object], state: DealerState | None = None) -> DealerState:
    state = initial_state() if state is None else state
    for event in events:
        state = evolve(state, event)
    return state


def a_played_round() -> list[object]:
    """Every event of a called and settled round, the dealer's own included, in log order."""
    log: list[object] = []
    state = initial_state()
    for message in (GAME.bet_placed(), call(command_id="c1")):
        state, events = DEALER.when(state, message)
        log += [message, *events] if message.type.startswith("round.") else events
    return [*log, settled()]


def test_a_bet_opens_a_round_with_its_bets_and_time() -> None:
    r = fold_all([GAME.bet_placed()]).get("r1")

    assert r is not None
    assert (r.phase, r.player_id, r.ante, r.aa_bonus, r.currency) == (
        Phase.BET_PLACED,
        "p1",
        10,
        5,
        "EUR",
    )
    assert r.placed_at == NOW


def test_replaying_the_produced_events_reproduces_the_same_state() -> None:
    log = a_played_round()
    once = fold_all(log)

    assert fold_all(log, once) == once
    assert fold_all([e for event in log for e in (event, event)]) == once
    assert once.get("r1").phase is Phase.SETTLED  # type: ignore[union-attr]


def test_an_old_event_coming_back_never_moves_a_round_backwards() -> None:
    state = fold_all([GAME.bet_placed(), sealed(), *GAME.played()[1:]])

    assert evolve(state, GAME.dealt()) is state
    assert evolve(state, GAME.bet_placed()) is state
    assert state.get("r1").phase is Phase.CALLED  # type: ignore[union-attr]


def test_a_deck_replayed_from_the_vault_after_the_decision_is_not_kept() -> None:
    state = fold_all([GAME.bet_placed(), *GAME.played()[1:], sealed()])

    assert state.get("r1").sealed is None  # type: ignore[union-attr]


def test_the_vault_replayed_before_the_rounds_still_gives_the_dealt_round_its_deck() -> None:
    state = fold_all([sealed(), GAME.bet_placed(), GAME.dealt()])

    r = state.get("r1")
    assert r is not None and r.phase is Phase.DEALT and r.sealed is not None
    assert unseal(r.sealed) == tuple(map(str, GAME.deck))


def test_open_rounds_are_those_not_settled_or_voided() -> None:
    state = fold_all([GAME.bet_placed()])
    assert state.open == {"r1"}

    state, _ = DEALER.when(state, void_round())
    assert state.open == frozenset() and state.get("r1").phase is Phase.VOIDED  # type: ignore[union-attr]


def test_a_closed_round_keeps_only_what_later_commands_need() -> None:
    state = fold_all(a_played_round())

    r = state.get("r1")
    assert r is not None and r.sealed is None
    assert state.answered("p1", "c1") is not None


def test_events_without_a_round_or_for_other_topics_leave_the_state_alone() -> None:
    state = fold_all([GAME.bet_placed()])

    assert evolve(state, call()) is state  # commands are not folded
