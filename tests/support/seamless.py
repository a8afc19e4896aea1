"""The seamless-mode wallet's decider wired to the reference operator wallet, step by step: what
the wallet publishes goes to the (faulty) operator, what the operator answers comes back."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import Message, Mode, dump, parse
from holdem.core.contracts.seamless import SeamlessReply, SeamlessRequest
from holdem.core.decider import Context
from holdem.core.table_book import TableBook
from holdem.core.verify import expected_settled
from holdem.harness.audit_seamless import seamless_violations
from holdem.wallet.admission import Tables
from holdem.wallet.seamless import Timing, bind_seamless, evolve_seamless, on_tick
from holdem.wallet.state import State, initial_state
from support.deciders import NOW
from support.rounds import RoundEvents
from support.wallet import TABLE, place_bet
from support.wallet import voided as voided_event

TIMING = Timing(debit_timeout=timedelta(seconds=10), retry_after=timedelta(seconds=5))
DECIDE = bind_seamless(Tables(TABLE, TableBook()), TIMING)
START = 1_000_000  # each player's balance at the operator


@dataclass
class Bridged:
    """A wallet state, a clock, and everything published (and answered) so far."""

    operator: FaultyOperator = field(
        default_factory=lambda: FaultyOperator(OperatorWallet(), Faults())
    )
    state: State = field(default_factory=initial_state)
    now: datetime = NOW
    published: list[Message] = field(default_factory=list)
    replies: list[SeamlessReply] = field(default_factory=list)
    inputs: int = 0
    decide: Any = DECIDE  # bind_seamless(...) over another table book

    def fund(self, player_id: str, amount: int = START) -> None:
        self.operator.wallet.balances[(player_id, "EUR")] = amount

    def handle(self, message: Message, *, fold: bool = False) -> list[Message]:
        """Decide one input like the runtime (``fold``: it is on a topic the wallet folds)."""
        self.inputs += 1
        if fold:
            evolve_seamless(self.state, message)
        ctx = Context(self.now, message.event_id, seed=f"input/{self.inputs}")
        return self._publish(self.decide(self.state, message, ctx))

    def tick(self, seconds: float = 1.0) -> list[Message]:
        self.now += timedelta(seconds=seconds)
        ctx = Context(self.now, cause_id=f"tick:wallet:0:{self.now.isoformat()}")  # the runtime's
        return self._publish(on_tick(self.state, ctx, TIMING))

    def deliver(self) -> list[Message]:
        """One step of the operator's line: decide on each answer it delivers now."""
        found: list[Message] = []
        for reply in self.operator.step():
            self.replies.append(reply)
            found += self.handle(reply)
        return found

    def reply(self, reply: SeamlessReply) -> list[Message]:
        self.replies.append(reply)
        return self.handle(reply)

    def bet(
        self, round_id: str, player_id: str = "p1", ante: int = 100, **kw: Any
    ) -> list[Message]:
        return self.handle(place_bet(round_id, ante=ante, player_id=player_id, **kw))

    def play(self, game: RoundEvents, decision: str = "call") -> list[Message]:
        """The dealer's Dealt and decision, then settlement's true Settled."""
        events = self.handle(game.dealt(), fold=True)
        end = game.called() if decision == "call" else game.folded()
        events += self.handle(end, fold=True)
        return events + self.handle(settled_for(game, decision), fold=True)

    def void(self, round_id: str, player_id: str = "p1") -> list[Message]:
        return self.handle(voided_event(round_id, player_id), fold=True)

    def of(self, kind: type[Any]) -> list[Any]:
        return [m for m in self.published if isinstance(m, kind)]

    def violations(self, *, require_closed: bool = True) -> list[str]:
        return seamless_violations(self.published, self.replies, require_closed=require_closed)

    def _publish(self, events: list[Message]) -> list[Message]:
        for event in events:
            assert parse(event.TOPIC, dump(event)) == event  # what a reader of the topic gets
            evolve_seamless(self.state, event)
            self.published.append(event)
            if isinstance(event, SeamlessRequest):
                self.operator.receive(event)
        return events


def game(round_id: str, player_id: str = "p1", ante: int = 100, aa_bonus: int = 0) -> RoundEvents:
    return RoundEvents(player_id=player_id, round_id=round_id, ante=ante, aa_bonus=aa_bonus)


def settled_for(game: RoundEvents, decision: str) -> Any:
    from holdem.core.contracts import Settled

    fields = expected_settled(
        deck=[str(card) for card in game.deck],
        salt=game.salt.hex(),
        commitment=game.commitment,
        currency="EUR",
        mode=Mode.REAL,
        ante=game.ante,
        aa_bonus=game.aa_bonus,
        decision=decision,
    )
    envelope = {"event_id": f"{game.player_id}.{game.round_id}.settled", "occurred_at": NOW}
    return Settled(**{**envelope, **fields, "player_id": game.player_id, "round_id": game.round_id})
