"""The wallet's bounded memory (ADR 010): after 10,000 rounds it holds at most its bounds, and
nothing it forgot can move money a second time."""

from __future__ import annotations

from datetime import timedelta
from functools import cache
from typing import Any

from support.deciders import NOW
from support.wallet import WALLET, deposit, place_bet, round_events, verified_settled, voided

from holdem.core.contracts import Malfunction, Message, PayoutCredited, Reason, WalletRejected
from holdem.wallet.snapshot import dump_state, load_state
from holdem.wallet.state import CLOCK_AHEAD, CLOSED_KEPT, COMMANDS_KEPT, ROUND_KEYS, State

ROUNDS = 10_000
SETTLED = 3  # the first rounds are called and paid, the others voided and refunded


def at(n: int) -> Any:
    """The n-th second of the history: commands are sent and answered one a second."""
    return NOW + timedelta(seconds=n)


def sent(message: Message, n: int) -> Any:
    return message.model_copy(update={"occurred_at": at(n)})


@cache
def history(rounds: int = ROUNDS) -> tuple[State, dict[str, Message]]:
    """One player's 10,000 rounds, decided as the runtime would; returns the state and the
    commands of the first round (to be resent late)."""
    first = {"deposit": sent(deposit(10**12, command_id="d0"), 0)}
    state, _ = WALLET.when(WALLET.given([]), first["deposit"], at(0), fold_input=False)
    for n in range(rounds):
        round_id, t = f"r{n}", 2 * n + 1
        bet = sent(place_bet(round_id, command_id=f"b{n}"), t)
        first.setdefault("bet", bet)
        state, _ = WALLET.when(state, bet, at(t), fold_input=False)
        state = play(state, round_id, n, at(t + 1))
    return state, first


def play(state: State, round_id: str, n: int, now: Any) -> State:
    game = round_events(round_id)
    if n < SETTLED:
        for message in (game.dealt(), game.called()):
            state, _ = WALLET.when(state, message, now)
        paid = verified_settled(round_id, ante=1_000, aa_bonus=0)
        state, _ = WALLET.when(state, paid, now)
        return state
    state, _ = WALLET.when(state, voided(round_id), now)
    return state


def test_after_10_000_rounds_the_state_holds_at_most_its_bounds() -> None:
    state, _ = history()

    assert len(state.rounds) <= CLOSED_KEPT and len(state.closed["p1"]) == CLOSED_KEPT
    assert len(state.commands) <= COMMANDS_KEPT and len(state.answered["p1"]) == COMMANDS_KEPT
    assert len(state.applied) <= len(ROUND_KEYS) * CLOSED_KEPT + COMMANDS_KEPT
    assert not state.evidence and not state.open_rounds
    assert state.account(("p1", "EUR", state.rounds[f"r{ROUNDS - 1}"].mode)).held == 0


def test_a_resend_inside_the_window_is_recognised_and_answers_nothing() -> None:
    state, _ = history()
    last = ROUNDS - 1
    resent = sent(place_bet(f"r{last}", command_id=f"b{last}"), 2 * last + 1)

    assert WALLET.when(state, resent, at(2 * ROUNDS), fold_input=False)[1] == []
    reused = sent(place_bet(f"r{last}", command_id="new"), 2 * ROUNDS)
    refusal = WALLET.when(state, reused, at(2 * ROUNDS), fold_input=False)[1][-1]
    assert isinstance(refusal, WalletRejected) and refusal.reason is Reason.ROUND_EXISTS


def test_a_command_resent_after_the_window_is_refused_and_moves_no_money() -> None:
    state, first = history()
    now = at(2 * ROUNDS + 5)

    for command in first.values():
        new_state, events = WALLET.when(state, command, now, fold_input=False)
        assert [type(e) for e in events][-1] is WalletRejected, events
        assert events[-1].reason is Reason.INVALID and "idempotency window" in events[-1].detail
        assert new_state.accounts == state.accounts and new_state.house == state.house


def test_a_settled_for_a_round_paid_long_ago_is_refused_not_paid_again() -> None:
    state, _ = history()
    late = verified_settled("r0", ante=1_000, aa_bonus=0, event_id="late-settled")

    events = WALLET.when(state, late, at(2 * ROUNDS + 5))[1]
    assert not any(isinstance(e, PayoutCredited) for e in events)
    assert [type(e) for e in events] == [Malfunction] and events[0].refuses_settled()


def test_a_new_command_after_the_window_is_accepted() -> None:
    state, _ = history()

    later = sent(deposit(5, command_id="d-new"), 2 * ROUNDS + 1)
    events = WALLET.when(state, later, at(2 * ROUNDS + 1), fold_input=False)[1]
    assert [e.type for e in events] == ["wallet.deposited"]


def test_a_command_dated_ahead_of_the_wallet_clock_is_refused() -> None:
    ahead = sent(deposit(5), 0).model_copy(update={"occurred_at": NOW + 2 * CLOCK_AHEAD})

    events = WALLET.when(WALLET.given([]), ahead, NOW, fold_input=False)[1]
    assert [type(e) for e in events] == [WalletRejected]
    assert events[0].reason is Reason.INVALID and "ahead" in events[0].detail


def test_the_snapshot_stays_the_same_size_from_1_000_to_10_000_rounds() -> None:
    state = history()[0]
    small, large = dump_state(history(1_000)[0]), dump_state(state)

    assert len(large) <= len(small) * 1.05  # the round ids are a character longer
    assert load_state(large) == state
