"""The wallet's windows (ADR 010) shrunk to a few entries: whatever it forgets, replay gives the
live state, money is conserved, no round is paid twice and no resent command applied twice."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.wallet import WALLET
from support.wallet_histories import HISTORIES, run

from holdem.core.contracts import (
    FundsDeposited,
    FundsWithdrawn,
    Mode,
    PayoutCredited,
    StakesRefunded,
    StakeTaken,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.wallet import state as wallet_state

# Deposits and withdrawals of one player reusing two command ids: resends after the window.
RESENDS = st.lists(
    st.tuples(
        st.sampled_from(["deposit", "withdraw"]),
        st.just("p1"),
        st.sampled_from([10, 20]),
        st.just(Mode.REAL),
        st.none() | st.sampled_from(["c1", "c2"]),
    ),
    max_size=12,
)
SPACINGS = st.sampled_from([timedelta(0), timedelta(seconds=1), timedelta(seconds=30)])


@contextmanager
def tiny_windows() -> Iterator[None]:
    with mock.patch.multiple(wallet_state, CLOSED_KEPT=1, COMMANDS_KEPT=2):
        yield


RESENT_AFTER_THE_WINDOW = [
    ("deposit", "p1", 10, Mode.REAL, "c1"),
    ("deposit", "p1", 10, Mode.REAL, None),
    ("withdraw", "p1", 10, Mode.REAL, None),
    ("deposit", "p1", 20, Mode.REAL, "c1"),
]


@settings(max_examples=300, deadline=None)
@given(HISTORIES | RESENDS, SPACINGS)
@example(RESENT_AFTER_THE_WINDOW, timedelta(0))
@example(RESENT_AFTER_THE_WINDOW, timedelta(seconds=30))
def test_forgetting_never_moves_money_twice(steps: list[Any], spacing: timedelta) -> None:
    with tiny_windows():
        state, log = run(steps, spacing)
        replayed = WALLET.given(log)

    assert replayed == state
    money = [e for e in log if isinstance(e, WalletEvent)]
    net = Counter[Any]()
    for e in money:
        if isinstance(e, FundsDeposited | FundsWithdrawn):
            net[(e.currency, e.mode)] += e.amount if isinstance(e, FundsDeposited) else -e.amount
    held = Counter[Any](state.house)
    for (_, currency, mode), account in state.accounts.items():
        assert account.available >= 0 and account.held >= 0
        held[(currency, mode)] += account.available + account.held
    assert +held == +net

    stakes = Counter((e.player_id, e.round_id) for e in money if isinstance(e, StakeTaken))
    ends = Counter(
        (e.player_id, e.round_id) for e in money if isinstance(e, PayoutCredited | StakesRefunded)
    )
    assert all(ends[key] <= stakes[key] for key in ends), (ends, stakes)
    if spacing == timedelta(
        0
    ):  # every command dated no later than one forgotten: each applied once
        applied = Counter((e.player_id, e.command_id) for e in money if e.command_id is not None)
        assert all(n == 1 for n in applied.values()), applied
