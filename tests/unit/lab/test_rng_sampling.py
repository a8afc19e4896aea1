"""The RNG report's tallies: they come from the dealer's shuffle and count what they say."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from holdem.core.cards import FULL_DECK
from holdem.core.deck import shuffle
from holdem.lab.rng import sampling
from holdem.lab.rng.sampling import Counts, count, draw, draw_chunk, hole_class, lehmer


def test_a_chunk_is_drawn_through_holdem_core_deck_shuffle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sampling.SOURCES, "zero", lambda n: 0)
    tallies = draw_chunk((3, "zero"))
    deck = shuffle(FULL_DECK, lambda n: 0)  # the dealer's function with the same source
    assert tallies.decks == 3
    assert [int(tallies.card_position[card, pos]) for pos, card in enumerate(deck)] == [3] * 52


def test_the_sorted_deck_is_one_ascending_run_and_one_alternating_run() -> None:
    tallies = count(np.arange(52, dtype=np.int64).reshape(1, 52))
    assert tallies.runs_up[1] == 1 and tallies.runs_alternating[1] == 1
    assert tallies.prefix5[0] == 1  # identity order has Lehmer code 0
    assert tallies.adjacent[0, 1] == 1 and tallies.adjacent.sum() == 51


def test_lehmer_codes_number_every_order_once() -> None:
    perms = np.array(list(itertools.permutations(range(4))), dtype=np.int64)
    assert sorted(lehmer(perms).tolist()) == list(range(24))


def test_hole_class_puts_pairs_suited_and_offsuit_in_their_cells() -> None:
    a, b = np.array([48, 48, 48]), np.array([49, 44, 45])  # Ac with Ad, Kc, Kd
    assert hole_class(a, b).tolist() == [12 * 13 + 12, 12 * 13 + 11, 11 * 13 + 12]


def test_draw_merges_chunks_and_saves_and_loads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tallies = draw(50, workers=2, chunk=20)
    assert tallies.decks == 50 and int(tallies.card_position.sum()) == 50 * 52
    tallies.save(tmp_path / "c.npz")
    again = Counts.load(tmp_path / "c.npz")
    assert again.decks == 50 and (again.card_position == tallies.card_position).all()


def test_draw_rejects_an_unknown_source_and_an_empty_run() -> None:
    with pytest.raises(ValueError, match="unknown random source"):
        draw(10, "mersenne")
    with pytest.raises(ValueError, match="at least one deck"):
        draw(0)


def test_the_production_source_is_the_dealers_default_randbelow() -> None:
    assert shuffle.__defaults__ == (FULL_DECK, sampling.SOURCES["secrets"])
