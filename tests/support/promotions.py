"""Promotion test vocabulary (ADR 029): the operator's promotion commands, a wallet over a book
with an open table, and a free hand played through the wallet's decider to its payout."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from holdem.core.cards import Card
from holdem.core.contracts import (
    CancelFreeHands,
    CreditPromo,
    GrantFreeHands,
    Message,
    PlayFreeHand,
    TableOpened,
)
from holdem.core.table_book import TableBook
from holdem.harness.audit import Record, violations
from holdem.wallet.decide import bind
from holdem.wallet.promotions import expire_campaigns
from holdem.wallet.state import State, evolve, initial_state
from support.deciders import NOW, Decider, context_for
from support.rounds import RoundEvents
from support.tables import table_event
from support.wallet import TABLE, deposit, verified_settled

EXPIRES = NOW + timedelta(days=7)


def _command(model: type[Any], player_id: str, command_id: str | None, **fields: Any) -> Any:
    return model(
        event_id=uuid.uuid4().hex,
        command_id=command_id or uuid.uuid4().hex,
        player_id=player_id,
        occurred_at=fields.pop("at", NOW),
        **fields,
    )


def credit_promo(
    amount: int, player_id: str = "p1", command_id: str | None = None, **kw: Any
) -> CreditPromo:
    kw.setdefault("currency", "EUR")
    kw.setdefault("campaign_id", "spring")
    kw.setdefault("reason", "compensation")
    return _command(CreditPromo, player_id, command_id, amount=amount, **kw)  # type: ignore[no-any-return]


def grant(
    hands: int = 5,
    player_id: str = "p1",
    campaign_id: str = "c1",
    command_id: str | None = None,
    **kw: Any,
) -> GrantFreeHands:
    kw.setdefault("table_id", "t1")
    kw.setdefault("ante", 1_000)
    kw.setdefault("aa_bonus", 500)
    kw.setdefault("expires_at", EXPIRES)
    return _command(  # type: ignore[no-any-return]
        GrantFreeHands, player_id, command_id, campaign_id=campaign_id, hands=hands, **kw
    )


def cancel(
    campaign_id: str = "c1", player_id: str = "p1", command_id: str | None = None, **kw: Any
) -> CancelFreeHands:
    return _command(CancelFreeHands, player_id, command_id, campaign_id=campaign_id, **kw)  # type: ignore[no-any-return]


def play(
    round_id: str,
    campaign_id: str = "c1",
    player_id: str = "p1",
    command_id: str | None = None,
    **kw: Any,
) -> PlayFreeHand:
    return _command(  # type: ignore[no-any-return]
        PlayFreeHand, player_id, command_id, round_id=round_id, campaign_id=campaign_id, **kw
    )


def promo_wallet() -> Decider[State]:
    """The transfer-mode wallet over a book where table t1 (EUR, ante 100-10 000, bonus up to
    5 000, chips 100/500/2 500) is open."""
    book = TableBook()
    book.evolve(table_event(TableOpened, 1))
    return Decider[State](initial_state, evolve, bind(TABLE, book))


@dataclass
class Promoted:
    """One player's wallet decisions over time, and everything it published (for the audit)."""

    wallet: Decider[State] = field(default_factory=promo_wallet)
    state: State = field(default_factory=initial_state)
    log: list[Any] = field(default_factory=lambda: [table_event(TableOpened, 1)])

    def send(self, message: Message, now: datetime = NOW, *, fold: bool = False) -> list[Any]:
        self.state, events = self.wallet.when(self.state, message, now, fold_input=fold)
        if fold:
            self.log.append(message)
        self.log += events
        return events

    def tick(self, now: datetime) -> list[Any]:
        events = expire_campaigns(self.state, context_for(deposit(1), now))
        for event in events:
            self.state = evolve(self.state, event)
        self.log += events
        return events

    def finish(
        self,
        round_id: str,
        deck: tuple[Card, ...] | None = None,
        decision: Literal["call", "fold"] = "call",
        player_id: str = "p1",
    ) -> list[Any]:
        """Deal, decide and settle ``round_id`` as dealer and settlement would (the rules'
        result of ``deck``); the wallet's answers to all of it."""
        game = RoundEvents(player_id=player_id, round_id=round_id)
        if deck is not None:
            game = RoundEvents(player_id=player_id, round_id=round_id, deck=deck)
        placed = next(
            e for e in self.log if e.type == "round.bet_placed" and e.round_id == round_id
        )
        reveal = game.called() if decision == "call" else game.folded()
        answers = self.send(game.dealt(ante=placed.ante, aa_bonus=placed.aa_bonus), fold=True)
        answers += self.send(reveal, fold=True)
        result = verified_settled(
            round_id, player_id, placed.ante, placed.aa_bonus, decision, game=game
        )
        answers += self.send(result, fold=True)
        return answers

    def audit(self) -> list[str]:
        """The harness's audit of everything published (and the rounds events fed in)."""
        records = [
            Record.of(m.TOPIC, 0, offset, m.model_dump_json().encode())
            for offset, m in enumerate(self.log)
        ]
        balances = {
            (p, c, str(m)): (a.available, a.held) for (p, c, m), a in self.state.accounts.items()
        }
        return violations(records, balances)
