"""The wallet's commands: deposits, withdrawals and bets, with exact balances and rejections."""

from __future__ import annotations

import copy

from support.deciders import context_for, types_of
from support.wallet import WALLET, balances, deposit, grant_fun, place_bet, round_events, withdraw

from holdem.core.contracts import (
    BetPlaced,
    BetRejected,
    CallHeld,
    FundsDeposited,
    FundsWithdrawn,
    Mode,
    Reason,
    StakeTaken,
    WalletRejected,
)
from holdem.wallet.state import State


def funded(amount: int, player_id: str = "p1", mode: Mode = Mode.REAL) -> State:
    state, _ = WALLET.when(WALLET.given([]), deposit(amount, player_id, mode=mode))
    return state


def rejection_reasons(events: list[object]) -> list[Reason]:
    return [e.reason for e in events if isinstance(e, BetRejected | WalletRejected)]


def test_a_deposit_credits_the_account_under_its_command_key() -> None:
    command = deposit(5_000, command_id="c1")
    state, [event] = WALLET.when(WALLET.given([]), command)

    assert isinstance(event, FundsDeposited)
    assert (event.idempotency_key, event.amount, event.available, event.held) == (
        "deposit:c1",
        5_000,
        5_000,
        0,
    )
    assert (event.command_id, event.causation_id) == ("c1", command.event_id)
    assert balances(state) == (5_000, 0)


def test_a_withdrawal_debits_the_account() -> None:
    state, [event] = WALLET.when(funded(5_000), withdraw(2_000, command_id="w1"))

    assert isinstance(event, FundsWithdrawn)
    assert (event.idempotency_key, event.available) == ("withdraw:w1", 3_000)
    assert balances(state) == (3_000, 0)


def test_a_withdrawal_beyond_the_available_balance_is_rejected() -> None:
    state, events = WALLET.when(funded(5_000), withdraw(5_001))

    assert types_of(events) == ["wallet.rejected"]
    assert rejection_reasons(events) == [Reason.INSUFFICIENT_FUNDS]
    assert balances(state) == (5_000, 0)


def test_a_bet_takes_ante_and_bonus_and_holds_twice_the_ante() -> None:
    state, events = WALLET.when(funded(10_000), place_bet("r1", ante=1_000, aa_bonus=500))

    placed, stake, hold = events
    assert isinstance(placed, BetPlaced) and isinstance(stake, StakeTaken)
    assert isinstance(hold, CallHeld)
    assert (placed.ante, placed.aa_bonus, placed.call_hold, placed.adjusted) == (
        1_000,
        500,
        2_000,
        False,
    )
    assert (stake.idempotency_key, stake.amount, stake.available, stake.held) == (
        "stake:r1",
        1_500,
        8_500,
        0,
    )
    assert (hold.idempotency_key, hold.amount, hold.available, hold.held) == (
        "hold:r1",
        2_000,
        6_500,
        2_000,
    )
    assert balances(state) == (6_500, 2_000)
    assert state.house[("EUR", Mode.REAL)] == 1_500


def test_bets_above_the_table_maxima_are_auto_adjusted_and_reported() -> None:
    _, events = WALLET.when(funded(1_000_000), place_bet(ante=250_000, aa_bonus=60_000))

    placed, stake, hold = events
    assert isinstance(placed, BetPlaced)
    assert (placed.requested_ante, placed.requested_aa_bonus) == (250_000, 60_000)
    assert (placed.ante, placed.aa_bonus, placed.adjusted) == (100_000, 50_000, True)
    assert (stake.amount, hold.amount) == (150_000, 200_000)


def test_an_ante_below_the_table_minimum_is_rejected_on_the_round_and_in_the_ledger() -> None:
    state, events = WALLET.when(funded(10_000), place_bet("r1", ante=99))

    assert types_of(events) == ["round.bet_rejected", "wallet.rejected"]
    assert rejection_reasons(events) == [Reason.BELOW_MINIMUM] * 2
    assert events[0].round_id == "r1"
    assert balances(state) == (10_000, 0)


def test_a_bet_in_another_currency_than_the_tables_is_rejected() -> None:
    state = WALLET.given([])
    state, _ = WALLET.when(state, deposit(10_000, currency="USD"))
    _, events = WALLET.when(state, place_bet(currency="USD"))

    assert rejection_reasons(events) == [Reason.UNSUPPORTED_CURRENCY] * 2


def test_a_bet_is_accepted_when_funds_exactly_cover_stakes_and_call() -> None:
    # ante 1000 + bonus 300 + call 2000
    _, events = WALLET.when(funded(3_300), place_bet(ante=1_000, aa_bonus=300))

    assert types_of(events) == ["round.bet_placed", "wallet.stake_taken", "wallet.call_held"]
    assert (events[2].available, events[2].held) == (0, 2_000)


def test_a_bet_is_rejected_when_funds_are_one_short() -> None:
    state, events = WALLET.when(funded(3_299), place_bet(ante=1_000, aa_bonus=300))

    assert rejection_reasons(events) == [Reason.INSUFFICIENT_FUNDS] * 2
    assert balances(state) == (3_299, 0)


def test_funds_are_checked_against_the_adjusted_bets() -> None:
    # asks for 200 000 ante; the table takes 100 000 and holds 200 000
    _, events = WALLET.when(funded(300_000), place_bet(ante=200_000))

    assert types_of(events)[0] == "round.bet_placed"


def test_a_reused_round_id_is_rejected() -> None:
    state, _ = WALLET.when(funded(100_000), place_bet("r1"))
    state, _ = WALLET.when(state, round_events("r1").dealt())
    state, _ = WALLET.when(state, round_events("r1").folded())
    _, events = WALLET.when(state, place_bet("r1"))

    assert rejection_reasons(events) == [Reason.ROUND_EXISTS] * 2


def test_a_second_round_is_rejected_while_the_first_awaits_its_decision() -> None:
    state, _ = WALLET.when(funded(100_000), place_bet("r1"))
    _, events = WALLET.when(state, place_bet("r2"))

    assert rejection_reasons(events) == [Reason.ROUND_IN_PROGRESS] * 2
    assert events[0].round_id == "r2"


def test_the_next_round_is_accepted_once_the_first_is_decided() -> None:
    state, _ = WALLET.when(funded(100_000), place_bet("r1"))
    state, _ = WALLET.when(state, round_events("r1").dealt())
    state, _ = WALLET.when(state, round_events("r1").folded())
    _, events = WALLET.when(state, place_bet("r2"))

    assert types_of(events)[0] == "round.bet_placed"


def test_a_resent_command_with_the_same_body_yields_nothing() -> None:
    state = funded(100_000)
    for command in (deposit(500, command_id="d1"), place_bet("r1", command_id="b1")):
        state, first = WALLET.when(state, command)
        resent = command.model_copy(update={"event_id": "resent-" + command.event_id[:50]})
        state_after, again = WALLET.when(state, resent)
        assert first and again == []
        assert state_after == state


def test_a_resent_rejected_bet_is_not_decided_again_even_after_a_deposit() -> None:
    state, first = WALLET.when(funded(1_000), place_bet("r1", ante=1_000, command_id="b1"))
    state, _ = WALLET.when(state, deposit(100_000))
    _, again = WALLET.when(state, place_bet("r1", ante=1_000, command_id="b1"))

    assert rejection_reasons(first) == [Reason.INSUFFICIENT_FUNDS] * 2
    assert again == []


def test_a_command_id_reused_with_another_body_is_rejected_as_duplicate() -> None:
    state, _ = WALLET.when(funded(100_000), deposit(500, command_id="c1"))
    state, events = WALLET.when(state, deposit(600, command_id="c1"))
    _, bet_events = WALLET.when(state, place_bet("r9", command_id="c1"))

    assert types_of(events) == ["wallet.rejected"]
    assert rejection_reasons(events) == [Reason.DUPLICATE]
    assert rejection_reasons(bet_events) == [Reason.DUPLICATE] * 2
    assert balances(state) == (100_500, 0)


def test_command_ids_are_scoped_by_player() -> None:
    state, _ = WALLET.when(WALLET.given([]), deposit(500, "p1", command_id="c1"))
    state, events = WALLET.when(state, deposit(700, "p2", command_id="c1"))

    assert types_of(events) == ["wallet.deposited"]
    assert (balances(state, "p1"), balances(state, "p2")) == ((500, 0), (700, 0))


def test_fun_money_is_a_separate_account_with_the_same_rules() -> None:
    state, _ = WALLET.when(funded(100_000), grant_fun(3_000))
    state, fun = WALLET.when(state, place_bet("f1", ante=1_000, mode=Mode.FUN))
    _, out = WALLET.when(state, withdraw(1, mode=Mode.FUN))
    _, into = WALLET.when(state, deposit(1, mode=Mode.FUN))

    assert all(e.mode == Mode.FUN for e in fun)
    assert balances(state, mode=Mode.FUN) == (0, 2_000)
    assert balances(state) == (100_000, 0)
    assert state.house == {("EUR", Mode.FUN): 1_000}
    # play money is granted and reset, never deposited or withdrawn
    assert rejection_reasons(out) == rejection_reasons(into) == [Reason.WRONG_MODE]


def test_decide_does_not_change_the_state_it_is_given() -> None:
    state = funded(10_000)
    before = copy.deepcopy(state)
    command = place_bet()
    WALLET.decide(state, command, context_for(command))

    assert state == before
