"""Forced decks (ADR 030): in a dealer started in test mode, an operator sets the first cards of
a player's next play-money round, to test the rare paths of his integration (a royal flush, an
AA Bonus, a dealer who does not qualify). The dealer's answers go to ``holdem.rounds``, keyed by
``player_id``; a dealer not in test mode refuses the command (``test_mode_only``)."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from holdem.core.contracts.base import CardText, Command, Id, Message

MAX_FORCED_CARDS = 9  # what one round deals (holdem.core.deck.CARDS_PER_ROUND)


def _distinct(cards: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(cards)) != len(cards):
        raise ValueError("a deck holds each card once: the cards repeat one")
    return cards


class ForceNextDeck(Command):
    """The first ``cards`` of the player's next play-money round, in the order
    ``holdem.core.deck.deal`` takes them off the deck: the player's two, the dealer's two, the
    flop, the turn, the river; the rest of the 52 is shuffled as ever. A new one replaces the
    player's pending one. Test mode only (ADR 030)."""

    OWNER: ClassVar[str] = "dealer"
    type: Literal["command.force_next_deck"] = "command.force_next_deck"
    version: Literal[1] = 1
    cards: tuple[CardText, ...] = Field(min_length=1, max_length=MAX_FORCED_CARDS)

    _cards_distinct = field_validator("cards")(_distinct)


class ForceRefusal(StrEnum):
    """Why a ForceNextDeck was refused; nothing changed."""

    TEST_MODE_ONLY = "test_mode_only"  # the dealer is not in test mode: it never forces a deck
    DUPLICATE = "duplicate"  # the command_id was used for another command


class DeckForced(Message):
    """The dealer took the forced deck: the player's next play-money round is dealt from it
    (its Dealt and reveal say ``forced``), once. ``command_id``: the ForceNextDeck behind it."""

    TOPIC: ClassVar[str] = "rounds"
    type: Literal["round.deck_forced"] = "round.deck_forced"
    version: Literal[1] = 1
    command_id: Id
    cards: tuple[CardText, ...] = Field(min_length=1, max_length=MAX_FORCED_CARDS)

    _cards_distinct = field_validator("cards")(_distinct)


class DeckForceRejected(Message):
    """A ForceNextDeck the dealer refused; nothing changed."""

    TOPIC: ClassVar[str] = "rounds"
    type: Literal["round.deck_force_rejected"] = "round.deck_force_rejected"
    version: Literal[1] = 1
    command_id: Id
    reason: ForceRefusal
    detail: str = Field(default="", max_length=500)
