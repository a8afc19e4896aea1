"""Issue 28's cheaper shuffle, deal and deck check (``holdem.core.deck``, a certified part): the
shuffle draws its indices in one loop over its one read of the OS CSPRNG, making the very swaps
the ``OneRead`` draw made from the same bits; the index draw is exactly uniform and rejects less
than half the time for every deck size; the bits a shuffle draws are exact."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from holdem.core import deck as deck_module
from holdem.core.cards import FULL_DECK, Card
from holdem.core.deck import DeckError, OneRead, deal, draw_swaps, ensure_full_deck, shuffle

# The decks the shuffle gave before it drew in one loop (main at 85bd577: ``shuffle`` over a
# ``OneRead``), for random.Random(seed).randbytes as the OS CSPRNG, seeds 1, 2, 3, 28; and the
# last for random.Random(99).randbytes read 3 bytes at a time (many reads again).
BEFORE = [
    "Kd Qs 7d Ad 5c 7s 6h Jc Js 9h 2c 9d 4d 4s Jh 8h 2s 4h Ac 6d Qd Ts Td Ah Tc Jd "
    "2d 7c As 6c 4c 2h 9s Kh 9c 5h Kc Ks 5d 8c 6s 5s 3d Qh 3h 7h 3c Qc Th 8d 8s 3s",
    "9s Ts Td Tc 5h 8h 4h 3h 5c Jc 4s Kd 6c 2s 7s 8c 3s 5s 2c Kc Qc Th 3c 6d 7c 8s "
    "Jh 2h 5d Ah 2d Qs 9c 7d 9d 3d Qd Ac 4d 8d 7h 4c Ad 6s 6h 9h Kh Js Ks Qh Jd As",
    "Jd 5s 5h 3h 7h Ks Ad 9d Jc 3s 2h 2d 9s 5c Ts 9c 6d 3d Kd Tc 2c 4s 8d Jh Qh 7s "
    "3c Ac 6s Qs Qc Ah 2s Kc 7d Js 8h 6c Td 8c 5d Kh Th 4h 8s 6h Qd 9h 7c 4d 4c As",
    "6c 2h 7d As 6s Qh Jh 9s 9d 8c Qd 4d Ac 7c 8h 5d Ks Kh 9h Th 2s 8s Jd 2c Td 6h "
    "3c 5h Ts 7h Js 3h Kd Jc 8d 3d Ad 2d 6d Tc 4c 7s Qs 3s Ah 4h 5s Qc 9c Kc 4s 5c",
    "2s 7d Ah 7c Th 4c 5d 7h 9h Jd Qs Ts 9d Kd 6d As 3h 2c 6h 9s Qh 4h 6c Ad 3d Ac "
    "8h Qc 3c 3s 2h Td 5s 5h 4d 4s 9c Js Jh Qd 6s Kh 5c Tc Ks 8c 7s Jc 2d 8d Kc 8s",
]


def texts(cards: tuple[Card, ...] | list[Card]) -> str:
    return " ".join(map(str, cards))


def test_the_one_loop_shuffle_makes_the_old_swaps_from_the_same_bits() -> None:
    for seed, before in zip((1, 2, 3, 28), BEFORE, strict=False):
        assert texts(shuffle(read=random.Random(seed).randbytes)) == before
        assert texts(shuffle(randbelow=OneRead(random.Random(seed).randbytes))) == before
    cards = list(FULL_DECK)
    draw_swaps(cards, random.Random(99).randbytes, size=3)
    assert texts(cards) == BEFORE[-1]


def test_the_one_loop_equals_one_read_on_many_reads_and_sizes() -> None:
    for seed in range(300):
        size = 1 + seed % 9 if seed % 2 else deck_module.SHUFFLE_BYTES
        cards = list(FULL_DECK)
        draw_swaps(cards, random.Random(seed).randbytes, size)
        old = shuffle(randbelow=OneRead(random.Random(seed).randbytes, size))
        assert tuple(cards) == old


def width(n: int) -> int:
    return (n - 1).bit_length()


@pytest.mark.parametrize("n", range(2, 53))
def test_the_index_draw_is_uniform_and_rejects_less_than_half_the_time(n: int) -> None:
    """Deck of n cards: the first draw is randbelow(n), and its index lands on the last place,
    which no later swap touches. Every pattern of its bits, then zeros: an accepted pattern
    gives itself; a rejected one costs its bits and the next draw (zeros) gives 0."""
    w = width(n)
    got: dict[int, int] = {}
    rejected = 0
    for value in range(1 << w):
        cards = list(range(n))
        bits = draw_swaps(cards, lambda size, v=value: v.to_bytes(size, "little"))
        if value < n:
            got[value] = cards[-1]
            assert bits == sum(width(m) for m in range(2, n + 1))
        else:
            rejected += 1
            assert cards[-1] == 0
            assert bits == w + sum(width(m) for m in range(2, n + 1))
    # Each index in [0, n) comes from exactly one of the 2**w equally likely patterns: uniform.
    assert got == {value: value for value in range(n)}
    assert rejected == (1 << w) - n
    assert Fraction(rejected, 1 << w) < Fraction(1, 2)  # n > 2**(w - 1)


def expected_bits(cards: int = 52) -> Fraction:
    """The bits a shuffle draws on average: a draw for randbelow(n) takes width(n) bits an
    attempt, and 2**width(n) / n attempts on average (each accepted with chance n / 2**w)."""
    return sum((Fraction(width(n) << width(n), n) for n in range(2, cards + 1)), Fraction(0))


def test_the_bits_a_shuffle_draws_are_exact() -> None:
    assert sum(width(n) for n in range(2, 53)) == 249  # without a rejection (all zeros)
    assert draw_swaps(list(FULL_DECK), bytes) == 249
    mean = expected_bits()
    assert mean == Fraction(34467994339014515179741, 96845140757687397075)
    assert round(float(mean), 1) == 355.9
    assert mean < 8 * deck_module.SHUFFLE_BYTES / 2  # one read: 1,024 bits, about 2.9 times it
    # The counted bits of 20,000 seeded shuffles average near the exact figure.
    source = random.Random(2028).randbytes
    drawn = [draw_swaps(list(FULL_DECK), source) for _ in range(20_000)]
    assert abs(Fraction(sum(drawn), len(drawn)) - mean) < 1


def test_the_full_deck_check_by_set_refuses_what_the_sorted_check_refused() -> None:
    ensure_full_deck(FULL_DECK)
    ensure_full_deck(list(range(51, -1, -1)))
    for bad in ([*range(51), 0], list(range(51)), [*range(52), 0], [*range(51), 52], [], ["0"]):
        with pytest.raises(DeckError):
            ensure_full_deck(bad)


def test_the_deal_and_the_shuffle_hand_out_the_decks_own_card_objects() -> None:
    shuffled = shuffle(read=random.Random(7).randbytes)
    assert all(card is FULL_DECK[card] for card in shuffled)
    cards = deal(shuffled)
    assert cards.player[0] is shuffled[0] and cards.river is shuffled[8]
    plain = deal(list(range(9)))  # plain codes are still made cards, and checked
    assert plain.player == (Card(0), Card(1)) and type(plain.river) is Card
    with pytest.raises(DeckError):
        deal([0, 1, 2, 3, 4, 5, 6, 7, 0])
