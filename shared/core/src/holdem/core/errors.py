"""Typed errors of a round's input; each ``code`` is the stable name a report or reply carries."""

from __future__ import annotations

from typing import ClassVar

from holdem.core.cards import CardError


class RoundError(ValueError):
    """A round or bet that cannot be settled; ``code`` names the problem on the wire."""

    code: ClassVar[str] = "invalid_round"


class CardCountError(RoundError):
    """A hand, hole or board with the wrong number of cards."""

    code: ClassVar[str] = "wrong_card_count"


class UnknownCardError(RoundError, CardError):
    """Something that is not a card code 0..51 (or card text)."""

    code: ClassVar[str] = "unknown_card"


class DuplicateCardError(RoundError, CardError):
    """The same card dealt twice in one round."""

    code: ClassVar[str] = "duplicate_card"


class StakeError(RoundError):
    """A stake that is not a non-negative int (a bool is not a stake), or a zero ante."""

    code: ClassVar[str] = "invalid_stake"


class DecisionError(RoundError):
    """A decision other than ``call`` or ``fold``."""

    code: ClassVar[str] = "unknown_decision"


class BetBelowMinimumError(RoundError):
    """An ante below the table minimum: rejected, never adjusted up."""

    code: ClassVar[str] = "ante_below_minimum"


class NotChipsError(RoundError):
    """A bet that is not a sum of the table's chip denominations, at a table that rejects it."""

    code: ClassVar[str] = "not_chips"
