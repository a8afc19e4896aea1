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


def promo_credit(books: Books, player: str, amount: int, at: datetime, campaign: str) -> Any:
    return books.move(c.PromoCredited, player, f"promo:{campaign}:{player}", amount, 1, 0, at,
                      None, campaign_id=campaign, reason="welcome")  # fmt: skip


def grant(player: str, campaign: str, hands: int, at: datetime) -> Any:
    return c.FreeHandsGranted(
        event_id=f"grant-{campaign}-{player}", player_id=player, occurred_at=at,
        campaign_id=campaign, command_id=f"grant-{campaign}", fingerprint="0" * 32,
        table_id="eur-low", currency="EUR", hands=min(max(hands, 1), 1000), ante=500, aa_bonus=250,
        expires_at=at + timedelta(days=7),
    )  # fmt: skip


def free_hand_paid(ante: int, aa_bonus: int, settled: c.Settled) -> int:
    """What the wallet pays for a free hand (ADR 029): the winnings of ante and bonus beyond
    their stakes (the promotion's), and the whole return of the call (the player's money)."""
    return (
        max(0, settled.ante_return - ante)
        + max(0, settled.bonus_return - aa_bonus)
        + settled.call_return
    )


def one_round(
    books: Books, player: str, round_id: str, at: datetime, rng: random.Random,
    ante: int = 500, aa_bonus: int = 250, void: bool = False, campaign: str | None = None,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    """The round's records on the rounds topic and on the wallet topic, in log order; with a
    ``campaign``, a free hand: the promotion pays ante and bonus, the player holds the call."""
    sealed = seal(rng.randrange, rng.randbytes(32))
    cards = deal(sealed.deck)
    hold, env = 2 * ante, {"player_id": player, "round_id": round_id}
    step = iter(range(1, 100))

    def at_step() -> datetime:
        return at + timedelta(milliseconds=40 * next(step))

    def move(kind: type[Any], name: str, amount: int, d_av: int, d_held: int, when: datetime,
             **extra: Any) -> Any:  # fmt: skip
        if campaign is not None:
            extra["campaign_id"] = campaign
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
    stake = (
        move(c.StakeTaken, "stake", ante + aa_bonus, -1, 0, at, ante=ante, aa_bonus=aa_bonus)
        if campaign is None
        else move(c.FreeStakeTaken, "free_stake", ante + aa_bonus, 0, 0, at, ante=ante,
                  aa_bonus=aa_bonus)
    )  # fmt: skip
    wallet = [stake, move(c.CallHeld, "hold", hold, -1, 1, at)]
    if void:
        when = at_step()
        void_id = {"event_id": f"{round_id}-v", "malfunction_id": f"{round_id}-m"}
        rounds.append(c.RoundVoided(occurred_at=when, reason="operator: test", **void_id, **env))
        wallet.append(move(c.CallReleased, "release", hold, 1, -1, when))
        if campaign is not None:  # the stake back to the promotion, nothing of the player's
            wallet.append(move(c.FreeStakeRefunded, "free_stake_refund", ante + aa_bonus, 0, 0,
                               when))  # fmt: skip
            wallet.append(move(c.StakesRefunded, "refund", 0, 1, 0, when))
        else:
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
    paid = settled.total_return if campaign is None else free_hand_paid(ante, aa_bonus, settled)
    wallet.append(move(c.PayoutCredited, "payout", paid, 1, 0, when))
    return rounds, wallet


def rounds(count: int, players: int = 100, seed: int = 1, start: datetime | None = None,
           voids_every: int = 40, tag: str = "s", free_every: int = 0,
           credits: int = 0) -> Iterator[tuple[str, Any]]:  # fmt: skip
    """``count`` rounds of ``players`` players as (role, message) in a log order: each player's
    deposit first (and ``credits`` minor units of promotional credit when not 0), then rounds
    spread over time; every ``free_every``-th round (0: none) a free hand of campaign
    ``<tag>-welcome``."""
    rng = random.Random(seed)
    books = Books()
    start = start or datetime(2026, 11, 30, tzinfo=UTC)
    ids = [f"sp{n:05d}" for n in range(players)]
    for player in ids:
        yield "wallet", deposit(books, player, 10**12 // 2, start)
        if credits:
            yield "wallet", promo_credit(books, player, credits, start, f"{tag}-welcome")
        if free_every:
            yield "wallet", grant(player, f"{tag}-welcome", count // free_every, start)
    for n in range(count):
        player = ids[n % players]
        at = start + timedelta(seconds=n * 86_000 / max(count, 1))
        void = voids_every > 0 and n % voids_every == voids_every - 1
        free = free_every > 0 and n % free_every == free_every - 1
        on_rounds, on_wallet = one_round(books, player, f"{tag}r{n:08d}", at, rng, void=void,
                                         campaign=f"{tag}-welcome" if free else None)  # fmt: skip
        for message in on_rounds:
            yield "rounds", message
        for message in on_wallet:
            yield "wallet", message
