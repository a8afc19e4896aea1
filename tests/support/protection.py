"""Player-protection test vocabulary (ADR 028): p1 at table t1 of a transfer-mode wallet, with
a clock, the operator's commands and the dealer's session events the wallet folds."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    BlockPlayer,
    Message,
    SessionEnded,
    SessionEndReason,
    SessionStarted,
    SetLimits,
    TableOpened,
)
from holdem.core.contracts.protection import Limits
from holdem.core.table_book import TableBook
from holdem.wallet.decide import bind
from holdem.wallet.state import State, evolve, initial_state
from support.deciders import NOW, Decider
from support.tables import bet_at, table_event
from support.wallet import TABLE, deposit, round_events, verified_settled

ANTE = 1_000  # a bet may wager ante + call (2 × ante): 3 000


def book() -> TableBook:
    tables = TableBook()
    tables.evolve(table_event(TableOpened, 1))
    return tables


@dataclass
class Seat:
    """p1 at table t1 with a clock: the wallet's decisions and the dealer's session events."""

    decider: Decider[State] = field(
        default_factory=lambda: Decider[State](initial_state, evolve, bind(TABLE, book()))
    )
    state: State = field(default_factory=initial_state)
    now: datetime = NOW
    session: str | None = None
    rounds: int = 0

    # What the wallet folds, one list per decision: its input (if of a topic it folds) and
    # its outputs, in the order they were folded live.
    log: list[list[Message]] = field(default_factory=list)

    def send(self, message: Any) -> list[Message]:
        message = message.model_copy(update={"occurred_at": self.now})
        self.state, events = self.decider.when(self.state, message, self.now)
        folded = [] if message.TOPIC == "commands" else [message]
        self.log.append([*folded, *(e for e in events if e.TOPIC in {"wallet", "rounds"})])
        return events

    def command(self, model: type[Any], command_id: str | None = None, **fields: Any) -> Any:
        return model(
            event_id=uuid.uuid4().hex,
            command_id=command_id or uuid.uuid4().hex,
            player_id="p1",
            occurred_at=self.now,
            **fields,
        )

    def limits(self, command_id: str | None = None, **limits: Any) -> list[Message]:
        body = Limits(currency="EUR", **limits)
        return self.send(self.command(SetLimits, command_id, limits=body))

    def bet(self, ante: int = ANTE) -> list[Message]:
        """A bet at t1; the dealer starts the session with the first one it sees."""
        self.rounds += 1
        events = self.send(bet_at("t1", f"r{self.rounds}", ante))
        placed = [e for e in events if isinstance(e, BetPlaced)]
        if placed and self.session is None:
            self.session = f"s{self.rounds}"
            self.send(
                SessionStarted(
                    event_id=f"start-{self.session}",
                    player_id="p1",
                    occurred_at=self.now,
                    session_id=self.session,
                    table_id="t1",
                    round_id=placed[0].round_id,
                    command_id=placed[0].command_id,
                    idle_timeout_s=900,
                )
            )
        return events

    def play(self, decision: str = "call", ante: int = ANTE) -> list[Message]:
        """A round bet, dealt, decided and settled; the bet's answer if it is refused."""
        events = self.bet(ante)
        if not any(isinstance(e, BetPlaced) for e in events):
            return events
        round_id = f"r{self.rounds}"
        game = round_events(round_id)
        self.send(game.dealt())
        self.send(game.called() if decision == "call" else game.folded())
        settled = verified_settled(round_id, ante=ante, aa_bonus=0, decision=decision)  # type: ignore[arg-type]
        return events + self.send(settled)

    def end_session(self) -> None:
        assert self.session is not None
        ended = SessionEnded(
            event_id=f"end-{self.session}",
            player_id="p1",
            occurred_at=self.now,
            session_id=self.session,
            table_id="t1",
            reason=SessionEndReason.ENDED,
        )
        self.send(ended)
        self.session = None

    def later(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def funded(amount: int = 1_000_000) -> Seat:
    seat = Seat()
    seat.send(deposit(amount))
    return seat


def protected_state() -> State:
    """A state with every part of protection: limits, a block, a day's totals, a session."""
    seat = funded()
    seat.limits(wager_per_day=100_000, loss_per_day=50_000, reality_check_s=600)
    seat.play("call")
    seat.bet()
    seat.send(seat.command(BlockPlayer))
    return seat.state
