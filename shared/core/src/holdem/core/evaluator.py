"""Poker hand evaluator: best five of 5, 6 or 7 cards as one int, higher is better.

Values are dense ranks 0..7461 of the distinct five-card hands, so equal values tie exactly and
suits never break ties. ``evaluate`` works on plain Python ints (a few table steps per hand)
over the tables shipped in ``evaluator_data``, decoded in memory when this module is imported: no
file, no environment, no cache directory. The numba batch evaluator over whole arrays is
``holdem.math.batch.evaluate_batch`` (holdem-math, which services do not install). Cards are not
validated here: pass distinct codes 0..51 (``cards.parse_cards`` checks text).

>>> from holdem.core.cards import parse_cards
>>> royal = evaluate(parse_cards("AsKsQsJsTs2c3d"))
>>> royal, category(royal).name
(7461, 'ROYAL_FLUSH')
>>> wheel, six_high = evaluate(parse_cards("As2d3h4c5s")), evaluate(parse_cards("2d3h4c5s6s"))
>>> category(wheel).name, wheel < six_high
('STRAIGHT', True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from holdem.core.cards import HandCategory
from holdem.core.evaluator_tables import SUIT_BITS, Tables, shipped_tables

VALUE_COUNT: Final = 7462

_TABLES: Final[Tables] = shipped_tables()
_KEY: Final[list[int]] = _TABLES.card_key.tolist()
_FLUSH_SUIT: Final[list[int]] = _TABLES.flush_suit.tolist()
_FLUSH: Final[list[int]] = _TABLES.flush.tolist()
_PLAIN: Final[list[dict[int, int]]] = [
    dict(zip(s.tolist(), v.tolist(), strict=True))
    for s, v in zip(_TABLES.rank_sums, _TABLES.rank_values, strict=True)
]
_CATEGORY: Final[list[HandCategory]] = [HandCategory(c) for c in _TABLES.category.tolist()]
_LOW: Final = (1 << SUIT_BITS) - 1


def _flush_mask(cards: Sequence[int], suit: int) -> int:
    mask = 0
    for card in cards:
        if card & 3 == suit:
            mask |= 1 << (int(card) >> 2)
    return mask


def _make_evaluate() -> Callable[[Sequence[int]], int]:
    # the tables are bound as closure cells: faster to reach than module globals
    key, flush_suit, flush = _KEY, _FLUSH_SUIT, _FLUSH
    plain5, plain6, plain7 = _PLAIN

    def evaluate(cards: Sequence[int]) -> int:
        """Value of the best five of 5, 6 or 7 distinct cards (ints 0..51 or ``Card``)."""
        n = len(cards)
        if n == 7:
            a, b, c, d, e, f, g = cards
            total = key[a] + key[b] + key[c] + key[d] + key[e] + key[f] + key[g]
            plain = plain7
        elif n == 5:
            a, b, c, d, e = cards
            total = key[a] + key[b] + key[c] + key[d] + key[e]
            plain = plain5
        elif n == 6:
            a, b, c, d, e, f = cards
            total = key[a] + key[b] + key[c] + key[d] + key[e] + key[f]
            plain = plain6
        else:
            raise ValueError(f"evaluate takes 5, 6 or 7 cards, not {n}")
        suit = flush_suit[total & _LOW]
        if suit < 0:
            return plain[total >> SUIT_BITS]
        return flush[_flush_mask(cards, suit)]

    return evaluate


evaluate: Final = _make_evaluate()


def category(value: int) -> HandCategory:
    """The hand category of a value (``ROYAL_FLUSH`` for the ace-high straight flush)."""
    return _CATEGORY[value]
