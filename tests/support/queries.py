"""A round's rounds-topic and wallet-topic events as dealer, wallet and settlement publish them,
for the query service's tests (the fold, the service, the history window)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Literal

from holdem.core.contracts import (
    CallCaptured,
    CallHeld,
    CallReleased,
    Message,
    Mode,
    PayoutCredited,
    RoundVoided,
    Settled,
    StakesRefunded,
    StakeTaken,
)
from holdem.core.verify import expected_settled
from support.rounds import RoundEvents

Decision = Literal["call", "fold", "void"]


@dataclass(frozen=True)
class PlayedRound:
    rounds: list[Message]
    wallet: list[Message]
    before: int  # the player's balance (available + held) before and after the round
    after: int

    @property
    def interleaved(self) -> list[Message]:
        """Wallet first where both topics have an event: a reader may see them in any order."""
        merged: list[Message] = []
        for index in range(max(len(self.rounds), len(self.wallet))):
            merged += self.wallet[index : index + 1] + self.rounds[index : index + 1]
        return merged


def settled_of(game: RoundEvents, decision: Literal["call", "fold"], **kw: Any) -> Settled:
    """Settlement's true result of ``game``."""
    fields = expected_settled(
        deck=[str(card) for card in game.deck],
        salt=game.salt.hex(),
        commitment=game.commitment,
        currency=game.currency,
        mode=game.mode,
        ante=game.ante,
        aa_bonus=game.aa_bonus,
        decision=decision,
    )
    return Settled(**{**game.envelope("settled", 3), **fields, **kw})


def play(
    game: RoundEvents, balance: int, decision: Decision = "call", *, offset_s: int = 0
) -> PlayedRound:
    """Every event of one round of ``game`` for a player holding ``balance`` (all available)."""
    stake, hold = game.ante + game.aa_bonus, 2 * game.ante
    counter = iter(range(100))

    def money(kind: type[Any], amount: int, available: int, held: int, **kw: Any) -> Any:
        n = next(counter)
        return kind(
            event_id=f"{game.player_id}.{game.round_id}.w{n}",
            player_id=game.player_id,
            round_id=game.round_id,
            occurred_at=game.at + timedelta(seconds=offset_s + n),
            idempotency_key=f"{game.round_id}.w{n}",
            currency=game.currency,
            mode=game.mode,
            amount=amount,
            available=available,
            held=held,
            **kw,
        )

    left = balance - stake
    wallet = [
        money(StakeTaken, stake, left, 0, ante=game.ante, aa_bonus=game.aa_bonus),
        money(CallHeld, hold, left - hold, hold),
    ]
    rounds: list[Message] = [game.bet_placed(), game.dealt()]
    if decision == "void":
        void = RoundVoided(**game.envelope("voided", 3), malfunction_id="m1", reason="stuck")
        rounds.append(void)
        wallet += [
            money(CallReleased, hold, left, 0),
            money(StakesRefunded, stake, balance, 0),
        ]
        return PlayedRound(rounds, wallet, balance, balance)
    settled = settled_of(game, decision)
    rounds += [game.called() if decision == "call" else game.folded(), settled]
    if decision == "call":
        wallet.append(money(CallCaptured, hold, left - hold, 0))
        after = left - hold + settled.total_return
    else:
        wallet.append(money(CallReleased, hold, left, 0))
        after = left + settled.total_return
    if settled.total_return:
        wallet.append(money(PayoutCredited, settled.total_return, after, 0))
    return PlayedRound(rounds, wallet, balance, after)


def fun(game: RoundEvents) -> RoundEvents:
    return replace(game, mode=Mode.FUN)
