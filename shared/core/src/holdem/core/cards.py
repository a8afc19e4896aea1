"""Cards, ranks, suits and hand categories: the vocabulary every other module speaks.

A card is encoded as one small int, ``rank * 4 + suit`` (0..51), with ranks 0..12 for 2..A and
suits 0..3 for clubs, diamonds, hearts, spades. ``Card`` wraps that code for people and messages;
hot loops work on the bare ints.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Final

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "cdhs"
SUIT_SYMBOLS: Final = "♣♦♥♠"


class Rank(IntEnum):
    TWO = 0
    THREE = 1
    FOUR = 2
    FIVE = 3
    SIX = 4
    SEVEN = 5
    EIGHT = 6
    NINE = 7
    TEN = 8
    JACK = 9
    QUEEN = 10
    KING = 11
    ACE = 12


class Suit(IntEnum):
    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3


class HandCategory(IntEnum):
    """Poker hand categories, low to high; the names are the stable strings used on the wire."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def key(self) -> str:
        """The wire name, e.g. ``"four_of_a_kind"``."""
        return self.name.lower()


class CardError(ValueError):
    """Text that is not a card, or a set of cards that cannot be dealt (duplicates)."""


class Card(int):
    """One card, an int 0..51 (``rank * 4 + suit``) that prints as ``As``.

    >>> Card.parse("As"), int(Card.parse("2c")), Card.parse("Td").rank
    (Card('As'), 0, <Rank.TEN: 8>)
    """

    __slots__ = ()

    def __new__(cls, code: int) -> Card:
        if not 0 <= code < 52:
            raise CardError(f"card code out of range: {code}")
        return super().__new__(cls, code)

    @classmethod
    def of(cls, rank: Rank, suit: Suit) -> Card:
        return cls(int(rank) * 4 + int(suit))

    @classmethod
    def parse(cls, text: str) -> Card:
        card = _BY_TEXT.get(text)  # the canonical spellings, as every event carries them
        if card is not None:
            return card
        if len(text) != 2 or text[0].upper() not in RANK_CHARS or text[1].lower() not in SUIT_CHARS:
            raise CardError(f"not a card: {text!r} (expected rank 23456789TJQKA and suit cdhs)")
        return cls(RANK_CHARS.index(text[0].upper()) * 4 + SUIT_CHARS.index(text[1].lower()))

    @property
    def rank(self) -> Rank:
        return Rank(int(self) >> 2)

    @property
    def suit(self) -> Suit:
        return Suit(int(self) & 3)

    @property
    def pretty(self) -> str:
        """The card with a Unicode suit, for people: ``A♠``."""
        return RANK_CHARS[self.rank] + SUIT_SYMBOLS[self.suit]

    def __str__(self) -> str:
        return RANK_CHARS[int(self) >> 2] + SUIT_CHARS[int(self) & 3]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"


FULL_DECK: Final[tuple[Card, ...]] = tuple(Card(code) for code in range(52))
_BY_TEXT: Final[dict[str, Card]] = {str(card): card for card in FULL_DECK}


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse ``"AsKd"`` or ``["As", "Kd"]`` (spaces and commas allowed) into cards.

    >>> parse_cards("As Kd,2c")
    (Card('As'), Card('Kd'), Card('2c'))
    """
    if isinstance(text, str):
        compact = text.replace(" ", "").replace(",", "")
        if len(compact) % 2:
            raise CardError(f"not a list of cards: {text!r}")
        return tuple(Card.parse(compact[i : i + 2]) for i in range(0, len(compact), 2))
    items = tuple(text)
    cards = tuple(map(_BY_TEXT.get, items))  # a revealed deck: 52 canonical spellings, looked up
    if None in cards:  # another spelling somewhere: each read as Card.parse reads it
        return tuple(Card.parse(item) for item in items)
    return cards  # type: ignore[return-value]


def ensure_distinct(cards: Iterable[int]) -> None:
    """Raise ``CardError`` naming the first card that appears twice."""
    seen: set[int] = set()
    for card in cards:
        if card in seen:
            raise CardError(f"duplicate card: {Card(card)}")
        seen.add(card)


def format_cards(cards: Iterable[int]) -> str:
    return "".join(str(Card(card)) for card in cards)
