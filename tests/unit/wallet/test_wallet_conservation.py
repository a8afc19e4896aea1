"""Properties over random histories: money is conserved, and replay rebuilds the live state."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from support.wallet import WALLET, verified_settled
from support.wallet_histories import HISTORIES, run

from holdem.core.contracts import FundsDeposited, FundsWithdrawn, Message, Mode, PayoutCredited
from holdem.core.contracts.wallet import WalletEvent


def net_deposits(log: list[Message]) -> Counter[tuple[str, Mode]]:
    total: Counter[tuple[str, Mode]] = Counter()
    for event in log:
        if isinstance(event, FundsDeposited | FundsWithdrawn):
            sign = 1 if isinstance(event, FundsDeposited) else -1
            total[(event.currency, event.mode)] += sign * event.amount
    return total


@settings(max_examples=300, deadline=None)
@given(HISTORIES)
def test_players_and_house_always_hold_exactly_the_net_deposits(steps: list[Any]) -> None:
    state, log = run(steps)

    held: Counter[tuple[str, Mode]] = Counter(state.house)
    for (_, currency, mode), account in state.accounts.items():
        assert account.available >= 0 and account.held >= 0
        held[(currency, mode)] += account.available + account.held
    assert +held == +net_deposits(log)


@settings(max_examples=300, deadline=None)
@given(HISTORIES)
def test_replaying_the_ledger_rebuilds_the_live_state_even_with_overlap(steps: list[Any]) -> None:
    state, log = run(steps)

    assert WALLET.given(log) == state
    assert WALLET.given(log + log) == state  # replay overlapping the committed offset


@settings(max_examples=300, deadline=None)
@given(HISTORIES)
def test_every_movement_states_the_balances_after_it_and_uses_its_key_once(
    steps: list[Any],
) -> None:
    _, log = run(steps)

    state = WALLET.given([])
    keys = [(e.player_id, e.idempotency_key) for e in log if isinstance(e, WalletEvent)]
    assert len(keys) == len(set(keys))
    for event in log:
        state = WALLET.evolve(state, event)
        if isinstance(event, WalletEvent):
            account = state.account((event.player_id, event.currency, event.mode))
            assert (account.available, account.held) == (event.available, event.held)


@settings(max_examples=300, deadline=None)
@given(HISTORIES)
def test_every_payout_is_the_rules_result_of_its_round(steps: list[Any]) -> None:
    state, log = run(steps)

    for event in log:
        if not isinstance(event, PayoutCredited):
            continue
        stake = state.rounds[event.round_id or ""]
        decision = "call" if stake.call == "captured" else "fold"
        bets = {"ante": stake.ante, "aa_bonus": stake.aa_bonus, "mode": stake.mode}
        due = verified_settled(event.round_id or "", event.player_id, decision=decision, **bets)
        assert event.amount == due.total_return, (event, stake)
