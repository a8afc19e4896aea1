"""Random dealer histories for property tests: interleaved commands, log events, echoes, ticks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from holdem.dealer.state import DECIDED, DealerState, initial_state
from support.dealer import DEALER, call, fold, settled, tick, void_round, voided_by_settlement
from support.deciders import NOW
from support.rounds import RoundEvents

GAMES = {
    "r1": RoundEvents(player_id="p1", round_id="r1"),
    "r2": RoundEvents(player_id="p2", round_id="r2"),
}
COMMANDS = {"call": call, "fold": fold, "void": void_round}

round_ids = st.sampled_from(sorted(GAMES))
actions = st.one_of(
    st.tuples(st.just("bet"), round_ids),
    st.tuples(
        st.sampled_from(sorted(COMMANDS)),
        round_ids,
        st.sampled_from(["p1", "p2"]),
        st.sampled_from(["c1", "c2", "c3"]),
    ),
    st.tuples(st.just("malfunction"), round_ids, st.integers(0, 2)),
    st.tuples(st.just("tick"), st.floats(0, 20)),
    st.tuples(st.just("settle"), round_ids),
    st.tuples(st.just("echo"), st.integers(0, 10_000)),
)


@dataclass
class Run:
    """The runtime's loop in miniature: every rounds/vault event lands in ``log``."""

    state: DealerState = field(default_factory=initial_state)
    log: list[Any] = field(default_factory=list)
    produced: list[Any] = field(default_factory=list)
    seconds: float = 0.0

    def handle(self, message: Any, *, folded: bool) -> None:
        now = NOW + timedelta(seconds=self.seconds)
        self.state, events = DEALER.when(self.state, message, now, fold_input=folded)
        self.log += [message, *events] if folded else events
        self.produced += events

    def act(self, action: tuple[Any, ...]) -> None:
        kind, *args = action
        if kind == "bet":
            self.handle(GAMES[args[0]].bet_placed(), folded=True)
        elif kind in COMMANDS:
            round_id, player_id, command_id = args
            command = COMMANDS[kind](round_id, player_id, command_id)
            record = command.model_copy(update={"event_id": f"{kind}.{command_id}"})
            self.handle(record, folded=False)  # the same record again is a redelivery
        elif kind == "malfunction":
            self.handle(GAMES[args[0]].malfunction(f"m{args[1]}", source="wallet"), folded=True)
        elif kind == "tick":
            self.seconds += args[0]
            self.state, events = tick(self.state, self.seconds)
            self.log += events
            self.produced += events
        elif kind == "settle":
            self.settle(args[0])
        elif self.produced:  # echo: one of our own events redelivered
            self.handle(self.produced[args[0] % len(self.produced)], folded=True)

    def settle(self, round_id: str) -> None:
        """Settlement's part: one terminal event for a decided round, a void if it broke."""
        r = self.state.get(round_id)
        if r is None or r.phase not in DECIDED:
            return
        game = GAMES[round_id]
        end = voided_by_settlement(game) if r.malfunction_id else settled(game)
        self.handle(end, folded=True)
