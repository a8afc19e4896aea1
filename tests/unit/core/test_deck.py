"""The deck: unbiased shuffle, the commitment auditors recompute, and the deal order."""

from __future__ import annotations

import doctest
import hashlib
import inspect
import itertools
import os
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from holdem.core import deck as deck_module
from holdem.core.cards import FULL_DECK, parse_cards
from holdem.core.deck import (
    DeckError,
    commit,
    deal,
    deck_bytes,
    new_salt,
    seal,
    shuffle,
    verify_commitment,
)


def scripted(choices: list[int]) -> Iterator[int]:
    yield from choices


def replay(choices: list[int]) -> deck_module.RandBelow:
    """A randbelow that returns the scripted choices in order."""
    source = scripted(choices)
    return lambda n: next(source)


def test_doctests_pass() -> None:
    assert doctest.testmod(deck_module).failed == 0


def test_shuffle_defaults_to_the_os_csprng() -> None:
    assert inspect.signature(shuffle).parameters["randbelow"].default is None  # a fresh OneRead
    assert inspect.signature(seal).parameters["randbelow"].default is None
    assert deck_module.OneRead()._read is os.urandom


class CountedReads:
    """``os.urandom`` stand-in: seeded bytes (so the count is the same on every run), counted."""

    def __init__(self, seed: int) -> None:
        self.rng, self.sizes = random.Random(seed), list[int]()

    def __call__(self, size: int) -> bytes:
        self.sizes.append(size)
        return self.rng.randbytes(size)


def test_a_shuffle_reads_the_os_csprng_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Cost counter (issue 28): one system call for randomness per shuffle, not one per card.
    reads = CountedReads(seed=28)
    monkeypatch.setattr(deck_module.os, "urandom", reads)
    for _ in range(1000):
        shuffle()
    seal(salt=bytes(32))
    assert reads.sizes == [deck_module.SHUFFLE_BYTES] * 1001


def test_one_read_draws_every_value_below_n_equally_by_chi_square() -> None:
    draw = deck_module.OneRead(random.Random(5).randbytes)
    for n in (2, 3, 31, 32, 33, 52):
        counts = Counter(draw(n) for _ in range(200 * n))
        assert set(counts) == set(range(n))
        chi_square = sum((c - 200) ** 2 / 200 for c in counts.values())
        dof = n - 1
        assert chi_square < dof + 5 * (2 * dof) ** 0.5


def test_one_read_reads_again_when_its_bits_run_out_and_never_returns_a_rejected_value() -> None:
    reads = [b"\xff" * 4, b"\x05" + bytes(3)]  # all ones: 63 >= 52, rejected five times
    draw = deck_module.OneRead(lambda size: reads.pop(0), size=4)
    assert draw(52) == 5
    assert reads == []
    assert deck_module.OneRead(lambda size: bytes(size))(1) == 0  # 0 bits: only 0 is below 1


def test_card_positions_of_the_production_shuffle_are_uniform_by_chi_square(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(deck_module.os, "urandom", random.Random(20261205).randbytes)
    rounds = 5200  # 100 expected per (card, position) cell
    cells = Counter(
        (card, position) for _ in range(rounds) for position, card in enumerate(shuffle())
    )
    expected = rounds / 52
    chi_square = sum(
        (cells[cell] - expected) ** 2 / expected for cell in itertools.product(range(52), repeat=2)
    )
    dof = 51 * 51
    assert chi_square < dof + 5 * (2 * dof) ** 0.5


def test_a_shuffled_deck_holds_each_card_once() -> None:
    shuffled = shuffle()
    assert sorted(shuffled) == list(range(52))


def test_fisher_yates_asks_for_n_then_n_minus_one_down_to_two() -> None:
    asked: list[int] = []
    shuffle(FULL_DECK, lambda n: asked.append(n) or 0)
    assert asked == list(range(52, 1, -1))


def test_every_sequence_of_choices_gives_a_different_order_so_all_orders_are_equally_likely() -> (
    None
):
    # With 4 cards the choices are j4 in [0,4), j3 in [0,3), j2 in [0,2): 24 sequences. If they
    # map one to one onto the 24 orders, a uniform randbelow makes every order exactly 1/24.
    orders = {
        shuffle(range(4), replay(list(choice)))
        for choice in itertools.product(range(4), range(3), range(2))
    }
    assert len(orders) == 24 == len(set(itertools.permutations(range(4))))


def test_card_positions_are_uniform_by_chi_square_with_a_fixed_seed() -> None:
    rng = random.Random(20240601)
    rounds = 5200  # 100 expected per (card, position) cell
    cells = Counter(
        (card, position)
        for _ in range(rounds)
        for position, card in enumerate(shuffle(FULL_DECK, rng.randrange))
    )
    expected = rounds / 52
    chi_square = sum(
        (cells[cell] - expected) ** 2 / expected for cell in itertools.product(range(52), repeat=2)
    )
    dof = 51 * 51  # mean dof, standard deviation sqrt(2 * dof) ~ 72
    assert chi_square < dof + 5 * (2 * dof) ** 0.5


def test_orders_of_three_cards_are_uniform_by_chi_square_with_a_fixed_seed() -> None:
    rng = random.Random(7)
    counts = Counter(shuffle([0, 1, 2], rng.randrange) for _ in range(60_000))
    chi_square = sum((count - 10_000) ** 2 / 10_000 for count in counts.values())
    assert len(counts) == 6
    assert chi_square < 20.5  # p = 0.001 for 5 degrees of freedom


def test_a_random_source_out_of_range_is_an_error_not_a_bias() -> None:
    with pytest.raises(DeckError):
        shuffle(FULL_DECK, lambda n: n)


def test_the_commitment_is_sha256_of_salt_then_the_52_card_codes() -> None:
    shuffled = shuffle(FULL_DECK, random.Random(1).randrange)
    salt = bytes(range(32))
    expected = hashlib.sha256(salt + bytes(int(card) for card in shuffled)).hexdigest()
    assert commit(shuffled, salt) == expected
    assert deck_bytes(shuffled) == bytes(int(card) for card in shuffled)


def test_a_commitment_verifies_against_its_own_deck_and_salt() -> None:
    sealed = seal()
    assert len(sealed.salt) == 32
    assert verify_commitment(sealed.deck, sealed.salt, sealed.commitment)
    assert verify_commitment(sealed.deck, sealed.salt, sealed.commitment.upper())


def test_swapping_two_cards_breaks_the_commitment() -> None:
    sealed = seal(random.Random(3).randrange, salt=b"\x00" * 32)
    tampered = list(sealed.deck)
    tampered[2], tampered[40] = tampered[40], tampered[2]
    assert not verify_commitment(tampered, sealed.salt, sealed.commitment)


def test_another_salt_or_an_altered_digest_breaks_the_commitment() -> None:
    sealed = seal()
    assert not verify_commitment(sealed.deck, new_salt(), sealed.commitment)
    flipped = ("0" if sealed.commitment[0] != "0" else "1") + sealed.commitment[1:]
    assert not verify_commitment(sealed.deck, sealed.salt, flipped)
    assert not verify_commitment(sealed.deck, sealed.salt, "not hex")


def test_a_deck_that_is_not_52_distinct_cards_cannot_be_committed_or_verified() -> None:
    short = FULL_DECK[:51]
    doubled = (*FULL_DECK[:51], FULL_DECK[0])
    for bad in (short, doubled):
        with pytest.raises(DeckError):
            commit(bad, b"salt")
        assert not verify_commitment(bad, b"salt", hashlib.sha256(b"salt" + bytes(bad)).hexdigest())


def test_two_sealed_decks_differ() -> None:
    first, second = seal(), seal()
    assert first.salt != second.salt
    assert first.deck != second.deck


def test_the_deal_takes_player_dealer_flop_turn_river_from_the_top() -> None:
    shuffled = parse_cards("AsKd 7c7d 2h3h4h 5s 6s") + tuple(
        card for card in FULL_DECK if card not in parse_cards("AsKd7c7d2h3h4h5s6s")
    )
    dealt = deal(shuffled)
    assert dealt.player == parse_cards("AsKd")
    assert dealt.dealer == parse_cards("7c7d")
    assert dealt.flop == parse_cards("2h3h4h")
    assert (dealt.turn, dealt.river) == parse_cards("5s6s")
    assert dealt.board == parse_cards("2h3h4h5s6s")


def test_a_deal_needs_nine_distinct_cards() -> None:
    with pytest.raises(DeckError):
        deal(FULL_DECK[:8])
    with pytest.raises(DeckError):
        deal((*FULL_DECK[:8], FULL_DECK[0]))
