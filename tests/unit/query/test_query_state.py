"""The query service's fold: what each round looks like, in any order, once, bounded."""

from __future__ import annotations

from datetime import timedelta

import pytest
from support.deciders import NOW
from support.queries import fun, play, settled_of
from support.rounds import RoundEvents

from holdem.core.contracts import FreeStakeTaken, FundsDeposited, Message, Mode
from holdem.query.snapshot import SnapshotError, dump_state, load_state
from holdem.query.state import EARLY_KEPT, QueryState, evolve, initial_state

GAME = RoundEvents()  # As Ad vs 7c 2d on Ah Ks 9d 4c 3h, ante 10 + bonus 5


def fold(*events: Message, state: QueryState | None = None) -> QueryState:
    state = state or initial_state()
    for event in events:
        state = evolve(state, event)
    return state


def test_a_called_round_shows_everything_a_replay_needs() -> None:
    played = play(GAME, 1_000, "call")
    view = fold(*played.rounds, *played.wallet).books["p1"].rounds["r1"]
    settled = played.rounds[-1]
    assert view.state == "settled" and view.result == "win"
    assert (view.player_cards, view.flop) == (("As", "Ad"), ("Ah", "Ks", "9d"))
    assert (view.turn, view.river, view.dealer_cards) == ("4c", "3h", ("7c", "2d"))
    assert (view.ante, view.aa_bonus, view.call, view.total_bet) == (10, 5, 20, 35)
    assert view.total_won == settled.total_return == 80  # type: ignore[attr-defined]
    # the dealer does not qualify: ante paid 1 to 1, call back, AA Bonus 7 to 1 on trip aces
    assert (view.ante_return, view.call_return, view.bonus_return) == (20, 20, 40)
    assert (view.balance_before, view.balance_after) == (1_000, 1_000 - 35 + 80)
    assert view.commitment == GAME.commitment and view.salt == GAME.salt.hex()
    assert view.deck == tuple(map(str, GAME.deck))
    assert (view.started_at, view.ended_at) == (NOW, NOW + timedelta(seconds=3))
    assert (view.decision, view.auto, view.pay_table) == ("call", False, "standard-1")


def test_wallet_events_read_before_the_bet_give_the_same_round() -> None:
    played = play(GAME, 1_000, "fold")
    in_order = fold(*played.rounds, *played.wallet).books["p1"].rounds["r1"]
    wallet_first = fold(*played.interleaved).books["p1"].rounds["r1"]
    assert wallet_first == in_order
    assert (in_order.balance_before, in_order.balance_after) == (1_000, 985)
    assert (in_order.result, in_order.call, in_order.total_won) == ("fold", 0, 0)


def test_dealt_shows_the_hole_cards_and_flop_only() -> None:
    view = fold(GAME.bet_placed(), GAME.dealt()).books["p1"].rounds["r1"]
    assert view.state == "dealt" and view.flop == ("Ah", "Ks", "9d")
    assert view.turn is None and view.river is None and view.dealer_cards == ()
    assert view.deck is None and view.salt is None


def test_a_forged_settled_is_not_believed() -> None:
    game = GAME
    forged = settled_of(game, "call", total_return=10_000, ante_return=10_000)
    view = fold(game.bet_placed(), game.dealt(), game.called(), forged).books["p1"].rounds["r1"]
    assert view.state == "decided" and view.total_won == 0


def test_a_voided_round_returns_every_stake() -> None:
    played = play(GAME, 500, "void")
    view = fold(*played.rounds, *played.wallet).books["p1"].rounds["r1"]
    assert (view.state, view.result, view.void_reason) == ("voided", "voided", "stuck")
    assert view.total_won == view.total_bet == 15
    assert view.deck is None  # never revealed
    assert (view.balance_before, view.balance_after) == (500, 500)


def test_every_event_folded_twice_changes_nothing() -> None:
    played = play(GAME, 1_000, "call")
    once = fold(*played.rounds, *played.wallet)
    twice = fold(*played.rounds, *played.wallet, state=fold(*played.rounds, *played.wallet))
    assert dump_state(once) == dump_state(twice)


def test_a_fun_round_is_shown_while_open_and_not_kept_once_over() -> None:
    played = play(fun(GAME), 1_000, "call")
    state = fold(*played.rounds[:2])
    assert state.books["p1"].rounds["r1"].mode == Mode.FUN
    state = fold(*played.rounds[2:], *played.wallet, state=state)
    assert state.books["p1"].rounds == {}
    assert state.books["p1"].balances == {("EUR", "fun"): (1_045, 0)}


def test_the_history_keeps_the_last_rounds_only() -> None:
    state = initial_state(kept=3)
    for n in range(5):
        game = RoundEvents(round_id=f"r{n}", at=NOW + timedelta(minutes=n))
        state = fold(*play(game, 1_000).rounds, state=state)
    assert list(state.books["p1"].rounds) == ["r2", "r3", "r4"]


def test_early_wallet_facts_are_bounded() -> None:
    state = initial_state()
    for n in range(EARLY_KEPT + 5):
        state = fold(*play(RoundEvents(round_id=f"r{n}"), 1_000).wallet, state=state)
    assert len(state.books["p1"].early) == EARLY_KEPT


def test_a_snapshot_loads_back_the_same_state() -> None:
    deposit = FundsDeposited(
        event_id="d1", player_id="p2", occurred_at=NOW, idempotency_key="d1", currency="EUR",
        amount=500, available=500, held=0,
    )  # fmt: skip
    played = play(GAME, 1_000, "call")
    state = fold(*played.wallet[:1], *played.rounds[:2], deposit)  # early facts, open round
    state = fold(*play(RoundEvents(round_id="r0"), 1_000).rounds, state=state)
    loaded = load_state(dump_state(state))
    assert loaded == state


def test_a_snapshot_loaded_under_a_smaller_window_keeps_the_newest_rounds() -> None:
    state = initial_state(kept=5)
    for n in range(5):
        game = RoundEvents(round_id=f"r{n}", at=NOW + timedelta(minutes=n))
        state = fold(*play(game, 1_000).rounds, state=state)
    loaded = load_state(dump_state(state), kept=2)
    assert (loaded.kept, list(loaded.books["p1"].rounds)) == (2, ["r3", "r4"])


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b'{"service": "wallet", "version": 1}',
        b'{"service": "query", "version": 1, "kept": 5, "books": {"p1": {"balances": '
        b'[["EUR", "real", 1.5, 0]], "rounds": [], "early": []}}}',
        b'{"service": "query", "version": 1, "kept": 5, "books": {"p1": {"balances": [], '
        b'"rounds": [{"round_id": "r1"}], "early": []}}}',
    ],
)
def test_a_broken_snapshot_is_refused(raw: bytes) -> None:
    with pytest.raises(SnapshotError):
        load_state(raw)


def test_a_free_hands_balance_before_is_the_players_own_money() -> None:
    game = RoundEvents()
    free = FreeStakeTaken(
        **game.envelope("w0", 0), idempotency_key="stake:r1", currency="EUR", amount=15,
        available=1_000, held=0, campaign_id="c1", ante=10, aa_bonus=5,
    )  # fmt: skip
    state = initial_state()
    for event in (game.bet_placed(), free):
        state = evolve(state, event)

    assert state.books["p1"].rounds["r1"].balance_before == 1_000  # the promotion paid the 15
