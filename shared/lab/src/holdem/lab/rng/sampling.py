"""Draw decks through the dealer's own shuffle on every core and count what the tests need."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from holdem.core.cards import FULL_DECK
from holdem.core.deck import RandBelow, shuffle
from holdem.core.evaluator_tables import shipped_tables
from holdem.math.batch import evaluate_batch

Counts64 = npt.NDArray[np.int64]
DECK = 52
PREFIXES = (3, 4, 5)
# deal order (holdem.core.deck.deal): player 0-1, dealer 2-3, flop 4-6, turn 7, river 8
PLAYER_FLOP = [0, 1, 4, 5, 6]
PLAYER_SEVEN = [0, 1, 4, 5, 6, 7, 8]
DEALER_SEVEN = [2, 3, 4, 5, 6, 7, 8]


def modulo_biased_randbelow(n: int) -> int:
    """The classic bug, for the negative control only: one random byte reduced modulo ``n``."""
    return os.urandom(1)[0] % n


SOURCES: dict[str, RandBelow | None] = {
    # production: holdem.core.deck's default (None), one read of the OS CSPRNG per shuffle
    "secrets": None,
    "modulo-byte": modulo_biased_randbelow,
}


@dataclass
class Counts:
    """Every tally the battery reads, summed over decks; chunks merge with ``+``."""

    decks: int
    card_position: Counts64  # [card, position]
    adjacent: Counts64  # [card, next card]
    cross: npt.NDArray[np.float64]  # sum over decks of code[i] * code[j], [position, position]
    player_hole: Counts64  # 169 two-card classes, see hole_class
    dealer_hole: Counts64
    flop_texture: Counts64  # 9 classes, see flop_texture
    player_flop: Counts64  # 10 categories of the player's five cards at the flop
    player_seven: Counts64  # 10 categories of the player's final seven cards
    dealer_seven: Counts64
    prefix3: Counts64  # relative order (Lehmer code) of the first 3, 4, 5 cards
    prefix4: Counts64
    prefix5: Counts64
    runs_up: Counts64  # number of ascending runs of the 52 codes, 1..52
    runs_alternating: Counts64  # number of runs up and down, 1..51

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def save(self, path: Path) -> None:
        """Write the tallies to an ``.npz`` so a report can be rendered again without redrawing."""
        arrays: dict[str, Any] = {f.name: np.asarray(getattr(self, f.name)) for f in fields(self)}
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> Counts:
        """Read tallies written by ``save``."""
        with np.load(path) as data:
            values = {f.name: data[f.name] for f in fields(cls)}
        values["decks"] = int(values["decks"])
        return cls(**values)


def hole_class(a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """13 x 13 grid index: pairs on the diagonal, suited above (hi, lo), offsuit below (lo, hi)."""
    ra, rb = a >> 2, b >> 2
    hi, lo = np.maximum(ra, rb), np.minimum(ra, rb)
    suited = (a & 3) == (b & 3)
    index: npt.NDArray[np.int64] = np.where(suited, hi * 13 + lo, lo * 13 + hi)
    return index


def flop_texture(cards: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """3 x 3 index: distinct ranks (3 none / 2 pair / 1 trips) by distinct suits (1, 2, 3)."""
    ranks, suits = np.sort(cards >> 2, axis=1), np.sort(cards & 3, axis=1)
    distinct_r = 1 + (ranks[:, 1:] != ranks[:, :-1]).sum(axis=1)
    distinct_s = 1 + (suits[:, 1:] != suits[:, :-1]).sum(axis=1)
    index: npt.NDArray[np.int64] = (distinct_r - 1) * 3 + (distinct_s - 1)
    return index


def lehmer(prefix: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Index 0..k!-1 of the relative order of each row's k distinct values."""
    k = prefix.shape[1]
    code = np.zeros(prefix.shape[0], dtype=np.int64)
    for i in range(k):
        smaller_later = (prefix[:, i + 1 :] < prefix[:, i : i + 1]).sum(axis=1)
        code = code * (k - i) + smaller_later
    return code


def categories(hands: npt.NDArray[np.int64]) -> Counts64:
    """Hand-category counts (10) of rows of card codes, by the core's evaluator."""
    values = evaluate_batch(hands.astype(np.uint8))
    return np.bincount(shipped_tables().category[values], minlength=10).astype(np.int64)


def count(decks: npt.NDArray[np.int64]) -> Counts:
    """The tallies of a (n, 52) array of shuffled decks."""
    n = decks.shape[0]

    def tally(index: npt.NDArray[np.int64], size: int) -> Counts64:
        return np.bincount(index.ravel(), minlength=size).astype(np.int64)

    up = decks[:, 1:] > decks[:, :-1]
    codes = decks.astype(np.float64)
    return Counts(
        decks=n,
        card_position=tally(decks * DECK + np.arange(DECK), DECK * DECK).reshape(DECK, DECK),
        adjacent=tally(decks[:, :-1] * DECK + decks[:, 1:], DECK * DECK).reshape(DECK, DECK),
        cross=codes.T @ codes,
        player_hole=tally(hole_class(decks[:, 0], decks[:, 1]), 169),
        dealer_hole=tally(hole_class(decks[:, 2], decks[:, 3]), 169),
        flop_texture=tally(flop_texture(decks[:, 4:7]), 9),
        player_flop=categories(decks[:, PLAYER_FLOP]),
        player_seven=categories(decks[:, PLAYER_SEVEN]),
        dealer_seven=categories(decks[:, DEALER_SEVEN]),
        prefix3=tally(lehmer(decks[:, :3]), 6),
        prefix4=tally(lehmer(decks[:, :4]), 24),
        prefix5=tally(lehmer(decks[:, :5]), 120),
        runs_up=tally(1 + (~up).sum(axis=1), DECK + 1),
        runs_alternating=tally(1 + (up[:, 1:] != up[:, :-1]).sum(axis=1), DECK),
    )


def draw_chunk(task: tuple[int, str]) -> Counts:
    """Shuffle ``n`` fresh decks with ``holdem.core.deck.shuffle`` and the named source; count."""
    n, source = task
    randbelow = SOURCES[source]
    decks = np.array([shuffle(FULL_DECK, randbelow) for _ in range(n)], dtype=np.int64)
    return count(decks.reshape(n, DECK))


def chunks(total: int, size: int) -> Iterator[int]:
    """Split ``total`` decks into chunks of at most ``size``."""
    for start in range(0, total, size):
        yield min(size, total - start)


def draw(
    total: int,
    source: str = "secrets",
    workers: int | None = None,
    chunk: int = 20_000,
    on_chunk: Callable[[Counts], None] | None = None,
) -> Counts:
    """Counts over ``total`` decks, drawn in chunks on ``workers`` processes (all cores).

    ``on_chunk`` sees the running total after each chunk (progress, checkpoints).
    """
    if source not in SOURCES:
        raise ValueError(f"unknown random source {source!r}; one of {sorted(SOURCES)}")
    if total < 1:
        raise ValueError("draw at least one deck")
    tasks = [(n, source) for n in chunks(total, chunk)]
    procs = min(workers or os.cpu_count() or 1, len(tasks))
    result: Counts | None = None
    with multiprocessing.get_context("fork").Pool(procs) as pool:
        for part in pool.imap_unordered(draw_chunk, tasks):
            result = part if result is None else result + part
            if on_chunk is not None:
                on_chunk(result)
    assert result is not None
    return result
