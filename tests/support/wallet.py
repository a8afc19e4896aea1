"""Wallet test vocabulary: a table, its decider, and builders of the messages the wallet reads."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from holdem.core.contracts import (
    Deposit,
    GrantFun,
    Mode,
    PlaceBet,
    ResetFun,
    RoundVoided,
    Settled,
    Withdraw,
)
from holdem.core.limits import TableLimits
from holdem.core.verify import expected_settled
from holdem.wallet.admission import DefaultTable
from holdem.wallet.decide import bind
from holdem.wallet.state import State, evolve, initial_state
from support.deciders import NOW, Decider
from support.rounds import RoundEvents

TABLE = DefaultTable("EUR", TableLimits(ante_min=100, ante_max=100_000, bonus_max=50_000))
WALLET = Decider[State](initial_state, evolve, bind(TABLE))


def _command(model: type[Any], player_id: str, command_id: str | None, **fields: Any) -> Any:
    return model(
        event_id=uuid.uuid4().hex,
        command_id=command_id or uuid.uuid4().hex,
        player_id=player_id,
        occurred_at=NOW,
        **fields,
    )


def deposit(amount: int, player_id: str = "p1", command_id: str | None = None, **kw: Any) -> Any:
    kw.setdefault("currency", "EUR")
    return _command(Deposit, player_id, command_id, amount=amount, **kw)


def withdraw(amount: int, player_id: str = "p1", command_id: str | None = None, **kw: Any) -> Any:
    kw.setdefault("currency", "EUR")
    return _command(Withdraw, player_id, command_id, amount=amount, **kw)


def grant_fun(amount: int, player_id: str = "p1", command_id: str | None = None) -> Any:
    return _command(GrantFun, player_id, command_id, amount=amount, currency="EUR")


def reset_fun(amount: int, player_id: str = "p1", command_id: str | None = None) -> Any:
    return _command(ResetFun, player_id, command_id, amount=amount, currency="EUR")


def place_bet(
    round_id: str = "r1",
    ante: int = 1_000,
    aa_bonus: int = 0,
    player_id: str = "p1",
    command_id: str | None = None,
    **kw: Any,
) -> PlaceBet:
    kw.setdefault("currency", "EUR")
    command: PlaceBet = _command(
        PlaceBet, player_id, command_id, round_id=round_id, ante=ante, aa_bonus=aa_bonus, **kw
    )
    return command


def round_events(round_id: str = "r1", player_id: str = "p1") -> RoundEvents:
    """The dealer's events of a round (Called, Folded); their stakes are the wallet's business."""
    return RoundEvents(player_id=player_id, round_id=round_id)


def settled(
    total_return: int,
    round_id: str = "r1",
    player_id: str = "p1",
    decision: str = "call",
    **kw: Any,
) -> Settled:
    fields: dict[str, Any] = {
        "event_id": f"{player_id}.{round_id}.settled",
        "player_id": player_id,
        "round_id": round_id,
        "occurred_at": NOW,
        "currency": "EUR",
        "mode": Mode.REAL,
        "decision": decision,
        "result": "win" if total_return else ("fold" if decision == "fold" else "lose"),
        "dealer_qualifies": True,
        "ante": 0,
        "aa_bonus": 0,
        "call": 0,
        "ante_return": total_return,
        "call_return": 0,
        "bonus_return": 0,
        "total_return": total_return,
        "player_category": "pair",
        "dealer_category": "pair",
        "bonus_category": "pair",
        "bonus_class": "none",
    }
    return Settled(**{**fields, **kw})


def verified_settled(
    round_id: str = "r1",
    player_id: str = "p1",
    ante: int = 1_000,
    aa_bonus: int = 500,
    decision: Literal["call", "fold"] = "call",
    game: RoundEvents | None = None,
    **kw: Any,
) -> Settled:
    """Settlement's true result of ``round_events(round_id, player_id)`` (or ``game``) for these
    bets (the default deck's call wins 8 × ante: 2 ante + 2 call + 4 × bonus 500 with ante
    1 000)."""
    game = game or round_events(round_id, player_id)
    expected = expected_settled(
        deck=[str(card) for card in game.deck],
        salt=game.salt.hex(),
        commitment=game.commitment,
        currency="EUR",
        mode=kw.pop("mode", Mode.REAL),
        ante=ante,
        aa_bonus=aa_bonus,
        decision=decision,
    )
    envelope = {"event_id": f"{player_id}.{round_id}.settled", "occurred_at": NOW}
    fields = {**envelope, **expected, "player_id": player_id, "round_id": round_id}
    return Settled(**{**fields, **kw})


def forged_settled(
    player_id: str, round_id: str, event_id: str, ante: int = 10, **kw: Any
) -> Settled:
    """What an attacker with write access to holdem.rounds publishes: a royal flush paying
    999 999 999 on a called round of ``ante``."""
    fields: dict[str, Any] = {
        "event_id": event_id,
        "player_id": player_id,
        "round_id": round_id,
        "occurred_at": NOW,
        "currency": "EUR",
        "decision": "call",
        "result": "win",
        "dealer_qualifies": True,
        "ante": ante,
        "aa_bonus": 0,
        "call": 2 * ante,
        "ante_return": 999_999_999,
        "call_return": 0,
        "bonus_return": 0,
        "total_return": 999_999_999,
        "player_category": "royal_flush",
        "dealer_category": "high_card",
        "bonus_category": "royal_flush",
        "bonus_class": "none",
        "pay_table": "standard-1",
    }
    return Settled(**{**fields, **kw})


def voided(round_id: str = "r1", player_id: str = "p1", **kw: Any) -> RoundVoided:
    fields: dict[str, Any] = {
        "event_id": f"{player_id}.{round_id}.voided",
        "player_id": player_id,
        "round_id": round_id,
        "occurred_at": NOW,
        "malfunction_id": f"{player_id}.{round_id}.m1",
        "reason": "watchdog: stuck round",
    }
    return RoundVoided(**{**fields, **kw})


def balances(state: State, player_id: str = "p1", currency: str = "EUR", mode: Mode = Mode.REAL):
    """(available, held) of one account."""
    account = state.account((player_id, currency, mode))
    return account.available, account.held
