"""Casino Hold'em rules as data: pay tables, limits, dealer qualification, AA bonus, settlement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from types import MappingProxyType
from typing import Final, Literal

from holdem.core.cards import Card, HandCategory, parse_cards
from holdem.core.errors import (
    BetBelowMinimumError,
    CardCountError,
    DecisionError,
    DuplicateCardError,
    RoundError,
    StakeError,
    UnknownCardError,
)
from holdem.core.evaluator import category, evaluate
from holdem.core.limits import AdjustedBets, Adjustment, TableLimits, auto_adjust, check_stake

__all__ = [  # the limits and errors are re-exported so services import one module
    "ANTE_PAYS",
    "BONUS_TIERS",
    "DECISIONS",
    "RESULTS",
    "STANDARD",
    "AdjustedBets",
    "Adjustment",
    "BetBelowMinimumError",
    "BonusClass",
    "BonusTier",
    "CardCountError",
    "Decision",
    "DecisionError",
    "DuplicateCardError",
    "PayTable",
    "Result",
    "RoundError",
    "RoundOutcome",
    "StakeError",
    "TableLimits",
    "UnknownCardError",
    "auto_adjust",
    "bonus_class",
    "bonus_return",
    "check_round",
    "check_stake",
    "dealer_qualifies",
    "hand_value",
    "main_game",
    "settle",
    "situation",
]

Decision = Literal["call", "fold"]
Result = Literal["win", "lose", "push", "fold"]
BonusClass = Literal["flush_or_better", "aces_to_straight", "none"]
Payout = Literal["paid", "push", "lost"]
Situation = Literal["player_folds", "dealer_not_qualified", "tie", "player_wins", "dealer_wins"]

DECISIONS: Final[tuple[Decision, ...]] = ("call", "fold")
_WIRE_NAMES: Final = tuple(hand.key for hand in HandCategory)  # by value, for the hot path


@dataclass(frozen=True, slots=True)
class BonusTier:
    """One winning row of the AA Bonus table: ``weakest`` is the lowest five cards that win it."""

    name: BonusClass
    weakest: str
    pays: int


@dataclass(frozen=True)
class PayTable:
    """The pay tables of one game version; winnings are "X to 1" (stake back plus X × stake)."""

    version: str
    ante: Mapping[HandCategory, int] = field(hash=False)
    bonus: tuple[BonusTier, ...]
    call_pays: int = 1
    call_multiple: int = 2
    dealer_weakest: str = "4c4d5h3s2c"

    def __post_init__(self) -> None:
        if set(self.ante) != set(HandCategory):
            raise ValueError(f"pay table {self.version}: the ante table must pay every category")

    def bonus_tier(self, value: int) -> BonusTier | None:
        """The best AA Bonus row a five-card hand value reaches, or None if the bonus loses."""
        for weakest, tier in self._bonus_floors:
            if value >= weakest:
                return tier
        return None

    @cached_property
    def _bonus_floors(self) -> tuple[tuple[int, BonusTier], ...]:
        """Each AA Bonus row with the value of its weakest hand (every round settled asks)."""
        return tuple((hand_value(tier.weakest), tier) for tier in self.bonus)


# The ante pay table on the player's final 7-card hand; "Straight or less" pays 1 to 1.
ANTE_PAYS: Final[Mapping[HandCategory, int]] = MappingProxyType(
    {
        HandCategory.ROYAL_FLUSH: 100,
        HandCategory.STRAIGHT_FLUSH: 20,
        HandCategory.FOUR_OF_A_KIND: 10,
        HandCategory.FULL_HOUSE: 3,
        HandCategory.FLUSH: 2,
        HandCategory.STRAIGHT: 1,
        HandCategory.THREE_OF_A_KIND: 1,
        HandCategory.TWO_PAIR: 1,
        HandCategory.PAIR: 1,
        HandCategory.HIGH_CARD: 1,
    }
)

# The AA Bonus table on hole + flop, best row first. "Pair of Aces to Straight" is every hand from
# a pair of aces up to a straight: pair of aces, any two pair, three of a kind, any straight.
BONUS_TIERS: Final[tuple[BonusTier, ...]] = (
    BonusTier("flush_or_better", "7c5c4c3c2c", 25),
    BonusTier("aces_to_straight", "AcAd4h3s2c", 7),
)

STANDARD: Final = PayTable("standard-1", ANTE_PAYS, BONUS_TIERS)
# Every pay table the game has, by version: a table's terms may name only these (the wallet
# refuses another at CreateTable), and settlement pays a round by the one its bet pinned.
PAY_TABLES: Final[Mapping[str, PayTable]] = MappingProxyType({STANDARD.version: STANDARD})


def pay_table(version: str | None) -> PayTable | None:
    """The pay table a round's bet pinned (``None``: a bet from before tables pinned one, paid
    by the standard tables, the only ones there were); ``None`` for a version the game lacks.

    >>> pay_table(None) is pay_table("standard-1") is STANDARD, pay_table("standard-9")
    (True, None)
    """
    return STANDARD if version is None else PAY_TABLES.get(version)


# The sheets' "Results" table: (result, ante, call) for each situation after the decision.
RESULTS: Final[Mapping[Situation, tuple[Result, Payout, Payout]]] = MappingProxyType(
    {
        "player_folds": ("fold", "lost", "lost"),
        "dealer_not_qualified": ("win", "paid", "push"),
        "tie": ("push", "push", "push"),
        "player_wins": ("win", "paid", "paid"),
        "dealer_wins": ("lose", "lost", "lost"),
    }
)


@dataclass(frozen=True, slots=True)
class RoundOutcome:
    """The settlement of one round; every ``*_return`` includes its stake and is 0 when lost."""

    dealer_qualifies: bool
    result: Result
    ante_return: int
    call_return: int
    bonus_return: int
    total_return: int
    player_category: HandCategory
    dealer_category: HandCategory
    bonus_category: HandCategory
    bonus_class: BonusClass

    def to_wire(self) -> dict[str, object]:
        """The outcome as JSON-ready data, hand categories by their wire names."""
        return {
            "dealer_qualifies": self.dealer_qualifies,
            "result": self.result,
            "ante_return": self.ante_return,
            "call_return": self.call_return,
            "bonus_return": self.bonus_return,
            "total_return": self.total_return,
            "player_category": _WIRE_NAMES[self.player_category],
            "dealer_category": _WIRE_NAMES[self.dealer_category],
            "bonus_category": _WIRE_NAMES[self.bonus_category],
            "bonus_class": self.bonus_class,
        }


@cache
def hand_value(cards: str) -> int:
    """The ``evaluate`` value of a hand written as text; cached, for the tables' boundary hands.

    >>> hand_value(STANDARD.dealer_weakest) > hand_value("3c3dAhKsQc")
    True
    """
    return evaluate(parse_cards(cards))


def dealer_qualifies(value: int, tables: PayTable = STANDARD) -> bool:
    """True if the dealer's best five (an ``evaluate`` value) is a pair of 4s or better.

    >>> [dealer_qualifies(evaluate(parse_cards(h))) for h in ("4s4h2c3d9c", "3s3hAcKdQc")]
    [True, False]
    """
    return value >= hand_value(tables.dealer_weakest)


def bonus_class(
    hole: Sequence[int], flop: Sequence[int], tables: PayTable = STANDARD
) -> BonusClass:
    """The AA Bonus row of the first five cards (2 hole + 3 flop); turn and river never count.

    >>> flop = parse_cards("2c7h9s")
    >>> bonus_class(parse_cards("AsAd"), flop), bonus_class(parse_cards("KsKd"), flop)
    ('aces_to_straight', 'none')
    """
    if len(hole) != 2 or len(flop) != 3:
        raise CardCountError(f"the AA Bonus needs 2 + 3 cards, got {len(hole)} + {len(flop)}")
    tier = tables.bonus_tier(evaluate((*hole, *flop)))
    return "none" if tier is None else tier.name


def bonus_return(value: int, stake: int, tables: PayTable = STANDARD) -> int:
    """What a called AA Bonus of ``stake`` returns for a five-card hand value (0 if it loses)."""
    tier = tables.bonus_tier(value)
    return 0 if tier is None else stake * (1 + tier.pays)


def situation(player_value: int, dealer_value: int, tables: PayTable = STANDARD) -> Situation:
    """Which row of the results table a called round falls in."""
    if not dealer_qualifies(dealer_value, tables):
        return "dealer_not_qualified"
    if player_value == dealer_value:
        return "tie"
    return "player_wins" if player_value > dealer_value else "dealer_wins"


def main_game(
    player_value: int, dealer_value: int, ante: int, tables: PayTable = STANDARD
) -> tuple[Result, int, int]:
    """``(result, ante_return, call_return)`` of a called round, from the two 7-card values.

    With ``ante=1`` the returns are in units of the ante, e.g. for exact RTP enumeration.
    """
    return _returns(situation(player_value, dealer_value, tables), player_value, ante, tables)


def _returns(
    where: Situation, player_value: int, ante: int, tables: PayTable
) -> tuple[Result, int, int]:
    result, ante_payout, call_payout = RESULTS[where]
    call_stake = tables.call_multiple * ante
    return (
        result,
        _paid(ante, ante_payout, tables.ante[category(player_value)]),
        _paid(call_stake, call_payout, tables.call_pays),
    )


def _paid(stake: int, payout: Payout, pays: int) -> int:
    return {"lost": 0, "push": stake, "paid": stake * (1 + pays)}[payout]


def settle(
    player: Sequence[int],
    dealer: Sequence[int],
    board: Sequence[int],
    ante: int,
    aa_bonus: int,
    decision: Decision,
    tables: PayTable = STANDARD,
) -> RoundOutcome:
    """Settle one round: 2 player, 2 dealer and 5 board card codes, stakes in minor units.

    >>> cards = parse_cards("AsAd 7c2d AhKs9d4c3h")
    >>> o = settle(cards[:2], cards[2:4], cards[4:], 10, 5, "call")
    >>> o.result, o.dealer_qualifies, o.ante_return, o.call_return, o.bonus_return
    ('win', False, 20, 20, 40)
    """
    check_round(player, dealer, board, ante, aa_bonus, decision)
    player_value = evaluate((*player, *board))
    dealer_value = evaluate((*dealer, *board))
    bonus_value = evaluate((*player, *board[:3]))
    called = decision == "call"
    where = situation(player_value, dealer_value, tables) if called else "player_folds"
    result, ante_return, call_return = _returns(where, player_value, ante, tables)
    tier = tables.bonus_tier(bonus_value)
    bonus_paid = aa_bonus * (1 + tier.pays) if called and tier is not None else 0
    return RoundOutcome(
        dealer_qualifies=dealer_qualifies(dealer_value, tables),
        result=result,
        ante_return=ante_return,
        call_return=call_return,
        bonus_return=bonus_paid,
        total_return=ante_return + call_return + bonus_paid,
        player_category=category(player_value),
        dealer_category=category(dealer_value),
        bonus_category=category(bonus_value),
        bonus_class="none" if tier is None else tier.name,
    )


def check_round(
    player: Sequence[int],
    dealer: Sequence[int],
    board: Sequence[int],
    ante: int,
    aa_bonus: int,
    decision: str,
) -> None:
    """Raise the ``RoundError`` that names the first problem of a round's input, if any."""
    for name, cards, count in (("player", player, 2), ("dealer", dealer, 2), ("board", board, 5)):
        if len(cards) != count:
            raise CardCountError(f"{name} needs {count} cards, got {len(cards)}")
    dealt = (*player, *dealer, *board)
    for card in dealt:
        if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 52:
            raise UnknownCardError(f"not a card code (0..51): {card!r}")
    if len(set(dealt)) != len(dealt):
        twice = next(card for i, card in enumerate(dealt) if card in dealt[:i])
        raise DuplicateCardError(f"duplicate card: {Card(twice)}")
    check_stake("ante", ante, minimum=1)
    check_stake("aa_bonus", aa_bonus)
    if decision not in DECISIONS:
        raise DecisionError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
