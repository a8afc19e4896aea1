"""Synthetic rounds, as the services would publish them, for tests and benchmarks that need
many rounds without running the game: real decks, commitments and settlements (the core's
rules), wallet movements with consistent balances. Money is minor units."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from holdem.core import contracts as c
from holdem.core.deck import deal, seal
from holdem.core.strategy import basic
from holdem.core.verify import expected_settled


@dataclass
class Books:
    """Each player's (available, held), so that every movement reports the balance after it."""

    accounts: dict[str, list[int]] = field(default_factory=dict)
    serial: int = 0

    def move(self, kind: type[Any], player: str, key: str, amount: int, d_av: int, d_held: int,
             at: datetime, round_id: str | None, **extra: Any) -> Any:  # fmt: skip
        account = self.accounts.setdefault(player, [0, 0])
        account[0] += d_av * amount
        account[1] += d_held * amount
        self.serial += 1
        return kind(
            event_id=f"w-{self.serial}", player_id=player, occurred_at=at, round_id=round_id,
            idempotency_key=key, currency="EUR", amount=amount, available=account[0],
            held=account[1], **extra,
        )  # fmt: skip


def deposit(books: Books, player: str, amount: int, at: datetime) -> Any:
    return books.move(c.FundsDeposited, player, f"deposit:{player}", amount, 1, 0, at, None)


def one_round(
    books: Books, player: str, round_id: str, at: datetime, rng: random.Random,
    ante: int = 500, aa_bonus: int = 250, void: bool = False,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    """The round's records on the rounds topic and on the wallet topic, in log order."""
    sealed = seal(rng.randrange, rng.randbytes(32))
    cards = deal(sealed.deck)
    hold, env = 2 * ante, {"player_id": player, "round_id": round_id}
    step = iter(range(1, 100))

    def at_step() -> datetime:
        return at + timedelta(milliseconds=40 * next(step))

    def move(kind: type[Any], name: str, amount: int, d_av: int, d_held: int, when: datetime,
             **extra: Any) -> Any:  # fmt: skip
        return books.move(kind, player, f"{name}:{round_id}", amount, d_av, d_held, when,
                          round_id, **extra)  # fmt: skip

    rounds: list[Any] = [
        c.BetPlaced(event_id=f"{round_id}-b", occurred_at=at, command_id=f"{round_id}-c",
                    currency="EUR", ante=ante, aa_bonus=aa_bonus, call_hold=hold,
                    requested_ante=ante, requested_aa_bonus=aa_bonus, **env),
        c.Dealt(event_id=f"{round_id}-d", occurred_at=at_step(),
                player_cards=tuple(map(str, cards.player)), flop=tuple(map(str, cards.flop)),
                commitment=sealed.commitment, currency="EUR", ante=ante, aa_bonus=aa_bonus, **env),
    ]  # fmt: skip
    wallet = [
        move(c.StakeTaken, "stake", ante + aa_bonus, -1, 0, at, ante=ante, aa_bonus=aa_bonus),
        move(c.CallHeld, "hold", hold, -1, 1, at),
    ]  # fmt: skip
    if void:
        when = at_step()
        void_id = {"event_id": f"{round_id}-v", "malfunction_id": f"{round_id}-m"}
        rounds.append(c.RoundVoided(occurred_at=when, reason="operator: test", **void_id, **env))
        wallet.append(move(c.CallReleased, "release", hold, 1, -1, when))
        wallet.append(move(c.StakesRefunded, "refund", ante + aa_bonus, 1, 0, when))
        return rounds, wallet
    decision = basic(cards.player, cards.flop)
    deck, salt = tuple(map(str, sealed.deck)), sealed.salt.hex()
    reveal = {"turn": str(cards.turn), "river": str(cards.river), "salt": salt,
              "dealer_cards": tuple(map(str, cards.dealer)), "deck": deck}  # fmt: skip
    when = at_step()
    kind = c.Called if decision == "call" else c.Folded
    rounds.append(kind(event_id=f"{round_id}-x", occurred_at=when, **reveal, **env))
    if decision == "call":
        wallet.append(move(c.CallCaptured, "capture", hold, 0, -1, when))
    else:
        wallet.append(move(c.CallReleased, "release", hold, 1, -1, when))
    result = expected_settled(deck=deck, salt=salt,
                              commitment=sealed.commitment, currency="EUR", mode=c.Mode.REAL,
                              ante=ante, aa_bonus=aa_bonus, decision=decision)  # fmt: skip
    when = at_step()
    settled = c.Settled(event_id=f"{round_id}-s", occurred_at=when, **result, **env)
    rounds.append(settled)
    wallet.append(move(c.PayoutCredited, "payout", settled.total_return, 1, 0, when))
    return rounds, wallet


def rounds(count: int, players: int = 100, seed: int = 1, start: datetime | None = None,
           voids_every: int = 40, tag: str = "s") -> Iterator[tuple[str, Any]]:  # fmt: skip
    """``count`` rounds of ``players`` players as (role, message) in a log order: each player's
    deposit first, then rounds spread over time."""
    rng = random.Random(seed)
    books = Books()
    start = start or datetime(2026, 11, 30, tzinfo=UTC)
    ids = [f"sp{n:05d}" for n in range(players)]
    for player in ids:
        yield "wallet", deposit(books, player, 10**12 // 2, start)
    for n in range(count):
        player = ids[n % players]
        at = start + timedelta(seconds=n * 86_000 / max(count, 1))
        void = voids_every > 0 and n % voids_every == voids_every - 1
        on_rounds, on_wallet = one_round(books, player, f"{tag}r{n:08d}", at, rng, void=void)
        for message in on_rounds:
            yield "rounds", message
        for message in on_wallet:
            yield "wallet", message
