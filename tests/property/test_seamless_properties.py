"""Random fault schedules through the seamless wallet's decider and the reference operator
wallet (ADR 015): silence, lost answers, duplicates, rejections and delays that deliver answers
late and out of order. Whatever happens, once the line is healthy again every debit ends exactly
once (refused, credited or rolled back), every placed round ends once, and no money is made or
lost between the operator's books and the game's."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.seamless import START, Bridged, game

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import BetPlaced, Mode, PayoutCredited, StakesRefunded
from holdem.core.contracts.seamless import (
    CreditRequested,
    DebitRequested,
    SeamlessCredited,
    SeamlessDebited,
)

PLAYERS = ("p1", "p2", "p3")
FAULTS = st.builds(
    Faults,
    silence=st.sampled_from([0.0, 0.2, 0.5]),
    drop=st.sampled_from([0.0, 0.2, 0.5]),
    duplicate=st.sampled_from([0.0, 0.3, 1.0]),
    max_delay=st.integers(0, 6),
    reject_rate=st.sampled_from([0.0, 0.3]),
)
ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("bet"), st.sampled_from(PLAYERS)),
        st.tuples(
            st.just("end"), st.sampled_from(PLAYERS), st.sampled_from(["call", "fold", "void"])
        ),
        st.tuples(st.just("deliver")),
        st.tuples(st.just("tick"), st.sampled_from([1, 3, 6, 11])),
    ),
    max_size=60,
)


class Table:
    """The dealer and settlement, as far as the wallet sees them: each placed round played to
    the decision asked for, once."""

    def __init__(self, bridged: Bridged) -> None:
        self.b = bridged
        self.rounds = 0
        self.ended: set[str] = set()

    def bet(self, player: str) -> None:
        self.rounds += 1
        self.b.bet(f"{player}-r{self.rounds}", player_id=player, ante=100, aa_bonus=50)

    def end(self, player: str, how: str) -> None:
        placed = [m.round_id for m in self.b.of(BetPlaced) if m.player_id == player]
        open_rounds = [r for r in placed if r not in self.ended]
        if not open_rounds:
            return
        round_id = open_rounds[0]
        self.ended.add(round_id)
        if how == "void":
            self.b.void(round_id, player)
        else:
            self.b.play(game(round_id, player, ante=100, aa_bonus=50), how)


def run(faults: Faults, seed: int, actions: list[Any]) -> tuple[Bridged, Table]:
    b = Bridged(operator=FaultyOperator(OperatorWallet(), faults, seed=seed))
    for player in PLAYERS:
        b.fund(player)
    table = Table(b)
    for action in actions:
        if action[0] == "bet":
            table.bet(action[1])
        elif action[0] == "end":
            table.end(action[1], action[2])
        elif action[0] == "deliver":
            b.deliver()
        else:
            b.tick(action[1])
    # The line heals: what is in flight arrives, every round is played out, retries answered.
    b.operator.faults = Faults()
    for _ in range(30):
        for reply in b.operator.flush():
            b.reply(reply)
        for player in PLAYERS:
            table.end(player, "call")
        b.tick(11)
        if not b.state.bridges.open and not b.operator.in_flight:
            break
    return b, table


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(faults=FAULTS, seed=st.integers(0, 2**16), actions=ACTIONS)
def test_every_debit_ends_once_and_no_money_is_made_or_lost(
    faults: Faults, seed: int, actions: list[Any]
) -> None:
    b, _ = run(faults, seed, actions)
    assert not b.state.bridges.open, "a debit still waits after the line healed"
    assert b.violations() == []
    # Every placed round ended once, in the ledger and at the operator.
    placed = {m.round_id for m in b.of(BetPlaced)}
    ends = Counter(
        m.round_id for m in b.published if isinstance(m, PayoutCredited | StakesRefunded)
    )
    assert set(ends) == placed and set(ends.values()) <= {1}
    assert {m.round_id for m in b.of(SeamlessDebited)} == placed
    # The operator's books: each player lost what his debits took and got back his credits;
    # a rolled-back or refused debit cost him nothing.
    credited = {m.round_id for m in b.of(SeamlessCredited)}
    debits = {m.round_id: m for m in b.of(DebitRequested)}
    credits = {m.round_id: m.amount for m in b.of(CreditRequested)}
    for player in PLAYERS:
        expected = START + sum(
            credits[r] - debits[r].amount for r in credited if debits[r].player_id == player
        )
        assert b.operator.wallet.balance(player, "EUR") == expected, player
    # The game's books: nothing left in transit.
    for player in PLAYERS:
        assert b.state.account((player, "EUR", Mode.REAL)).available == 0
        assert b.state.account((player, "EUR", Mode.REAL)).held == 0


@settings(max_examples=40, deadline=None)
@given(faults=FAULTS, seed=st.integers(0, 2**16), actions=ACTIONS)
def test_replaying_the_log_gives_the_live_state(
    faults: Faults, seed: int, actions: list[Any]
) -> None:
    """What a restart rebuilds from the wallet's own records is the state it decided with, the
    topics read one after the other (a replay keeps each partition's order, not the order across
    topics: everything the bridge folds is on the wallet's topic)."""
    from holdem.wallet.seamless import evolve_seamless
    from holdem.wallet.state import initial_state

    b, _ = run(faults, seed, actions)
    replayed = initial_state()
    for topic in ("rounds", "wallet"):
        for message in b.published:
            if topic == message.TOPIC:
                evolve_seamless(replayed, message)
    assert replayed.bridges == b.state.bridges
    assert replayed.accounts == b.state.accounts
