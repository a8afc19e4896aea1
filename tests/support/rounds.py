"""A round's public events built from a forced deck, for deciders', services' and audit tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from holdem.core.cards import FULL_DECK, Card, ensure_distinct, parse_cards
from holdem.core.contracts import BetPlaced, Called, Dealt, Folded, Malfunction, Mode
from holdem.core.deck import commit, deal
from support.deciders import NOW

SALT = bytes(range(32))


def deck_for(player: str, dealer: str, board: str) -> tuple[Card, ...]:
    """A full deck whose deal (holdem.core.deck.deal order) gives exactly these cards.

    >>> [str(c) for c in deck_for("AsAd", "7c2d", "AhKs9d4c3h")[:9]]
    ['As', 'Ad', '7c', '2d', 'Ah', 'Ks', '9d', '4c', '3h']
    """
    first = (*parse_cards(player), *parse_cards(dealer), *parse_cards(board))
    if len(first) != 9:
        raise ValueError(f"need 2 + 2 + 5 cards, got {len(first)}")
    ensure_distinct(first)
    return (*first, *(card for card in FULL_DECK if card not in first))


@dataclass(frozen=True)
class RoundEvents:
    """The events of one round as wallet and dealer publish them; overrides tamper with them."""

    player_id: str = "p1"
    round_id: str = "r1"
    deck: tuple[Card, ...] = field(default_factory=lambda: deck_for("AsAd", "7c2d", "AhKs9d4c3h"))
    salt: bytes = SALT
    ante: int = 10
    aa_bonus: int = 5
    currency: str = "EUR"
    mode: Mode = Mode.REAL
    at: datetime = NOW

    @property
    def commitment(self) -> str:
        return commit(self.deck, self.salt)

    def envelope(self, name: str, seconds: int) -> dict[str, Any]:
        return {
            "event_id": f"{self.player_id}.{self.round_id}.{name}",
            "player_id": self.player_id,
            "round_id": self.round_id,
            "occurred_at": self.at + timedelta(seconds=seconds),
        }

    def bet_placed(self, **overrides: Any) -> BetPlaced:
        fields: dict[str, Any] = {
            **self.envelope("bet", 0),
            "command_id": f"{self.round_id}.place",
            "currency": self.currency,
            "mode": self.mode,
            "ante": self.ante,
            "aa_bonus": self.aa_bonus,
            "call_hold": 2 * self.ante,
            "requested_ante": self.ante,
            "requested_aa_bonus": self.aa_bonus,
        }
        return BetPlaced(**{**fields, **overrides})

    def dealt(self, **overrides: Any) -> Dealt:
        cards = deal(self.deck)
        fields: dict[str, Any] = {
            **self.envelope("dealt", 1),
            "player_cards": tuple(map(str, cards.player)),
            "flop": tuple(map(str, cards.flop)),
            "commitment": self.commitment,
            "currency": self.currency,
            "mode": self.mode,
            "ante": self.ante,
            "aa_bonus": self.aa_bonus,
        }
        return Dealt(**{**fields, **overrides})

    def _revealed(self, name: str, overrides: dict[str, Any]) -> dict[str, Any]:
        cards = deal(self.deck)
        fields: dict[str, Any] = {
            **self.envelope(name, 2),
            "turn": str(cards.turn),
            "river": str(cards.river),
            "dealer_cards": tuple(map(str, cards.dealer)),
            "deck": tuple(map(str, self.deck)),
            "salt": self.salt.hex(),
        }
        return {**fields, **overrides}

    def called(self, **overrides: Any) -> Called:
        return Called(**self._revealed("called", overrides))

    def folded(self, **overrides: Any) -> Folded:
        return Folded(**self._revealed("folded", overrides))

    def malfunction(self, name: str = "m1", **overrides: Any) -> Malfunction:
        fields: dict[str, Any] = {
            **self.envelope(name, 3),
            "source": "watchdog",
            "reason": "stuck round",
        }
        return Malfunction(**{**fields, **overrides})

    def played(self, decision: str = "call") -> list[Any]:
        """BetPlaced, Dealt and the decision: everything up to the settlement."""
        end = self.called() if decision == "call" else self.folded()
        return [self.bet_placed(), self.dealt(), end]
