"""A loaded query snapshot shares its short strings (cards, common words) instead of making one
object per occurrence: as fresh strings they were half of a loaded state's memory.

The sharing is pydantic-core's parser string cache (``from_json(cache_strings=True)``): a fixed
table under a per-process seeded hash, where two strings in one slot evict each other, so it does
not promise one object per card. The test bounds the distinct objects (under a quarter of the
occurrences); without the cache every occurrence is its own object."""

from __future__ import annotations

import copy

from support.queries import play
from support.rounds import RoundEvents

from holdem.query.snapshot import dump_state, load_state
from holdem.query.state import QueryState, evolve, initial_state

PLAYERS, ROUNDS = 20, 10


def many_rounds() -> QueryState:
    played = play(RoundEvents(), 1_000, "call")
    one = initial_state()
    for event in (*played.rounds, *played.wallet):
        one = evolve(one, event)
    book, view = one.books["p1"], one.books["p1"].rounds["r1"]
    state = QueryState(kept=one.kept)
    for player in range(PLAYERS):
        copied = copy.deepcopy(book)
        copied.rounds = {
            f"r{player}-{n}": view.model_copy(update={"round_id": f"r{player}-{n}"})
            for n in range(ROUNDS)
        }
        state.books[f"p{player}"] = copied
    return state


def test_a_loaded_snapshot_shares_its_card_and_word_strings() -> None:
    state = many_rounds()
    loaded = load_state(dump_state(state))
    assert loaded == state
    strings = [
        text
        for book in loaded.books.values()
        for view in book.rounds.values()
        for text in (
            *(view.deck or ()),
            *view.player_cards,
            *view.flop,
            *view.dealer_cards,
            view.currency,
            view.state,
        )
    ]
    assert len(strings) >= PLAYERS * ROUNDS * 60
    assert len({id(text) for text in strings}) < len(strings) / 4
