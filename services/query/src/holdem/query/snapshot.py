"""The query service's state as a snapshot (ADR 010/013): versioned JSON, every field checked
when loaded (each round through its contract, ``RoundView``)."""

from __future__ import annotations

from typing import Any, Final

import orjson
from pydantic_core import from_json

from holdem.core.contracts import Mode, RoundView
from holdem.core.contracts.protection import Limits
from holdem.core.contracts.queries import CampaignView, SessionView
from holdem.core.snapshot_codec import (
    SnapshotError,
    check_envelope,
    count,
    decoding,
    items,
    mapping,
    one_of,
    optional,
    text,
    time,
)
from holdem.query.state import Book, QueryState, trim

# v2: a round's session_id (ADR 020). A v1 snapshot still loads: its rounds have none.
# v3: a player's campaigns, limits, block and open sessions (issue 29). A v1 or v2 snapshot
# still loads without them (the service then shows them from the records it reads after it).
SNAPSHOT_VERSION: Final = 3
SERVICE: Final = "query"
__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "dump_state", "load_state"]
_MODES = one_of(*(mode.value for mode in Mode))
# One string object per card or common word, not one per occurrence: a history entry shows up to
# 62 cards (its deck too), and as fresh strings from the JSON they were half of a loaded state's
# memory (a 300-player state took 270 MB loaded against 133 MB folded, where cards are shared).
# pydantic-core's parser shares them itself (``cache_strings``: a string under 64 bytes is looked
# up in a fixed table before a new object is made), faster than replacing them entry by entry
# after the parse. A cache, not an intern table: two strings in one slot evict each other, so a
# few copies of a card remain (the test bounds them).


def dump_state(state: QueryState) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state."""
    body = {
        "service": SERVICE,
        "version": SNAPSHOT_VERSION,
        "kept": state.kept,
        "books": {player: _book(book) for player, book in state.books.items()},
    }
    return orjson.dumps(body)


def load_state(raw: bytes, kept: int | None = None) -> QueryState:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it;
    with ``kept`` (the service's setting, which may have changed since), bounded by it."""
    state = decoding(SERVICE, lambda: _load(_envelope(from_json(raw, cache_strings=True))))
    if kept is not None:
        state.kept = kept
        for book in state.books.values():
            trim(state, book)
    return state


def _envelope(body: Any) -> dict[str, Any]:
    version = body.get("version") if isinstance(body, dict) else None
    if version == 1 and type(version) is int:  # written before sessions: no round has one
        return check_envelope(body, SERVICE, 1)
    if version == 2 and type(version) is int:  # written before campaigns and protection
        return check_envelope(body, SERVICE, 2)
    return check_envelope(body, SERVICE, SNAPSHOT_VERSION)


def _book(book: Book) -> dict[str, Any]:
    return {
        "balances": [[c, m, a, h] for (c, m), (a, h) in book.balances.items()],
        "rounds": [view.model_dump(mode="json") for view in book.rounds.values()],
        "early": [[rid, before, after] for rid, (before, after) in book.early.items()],
        "campaigns": [view.model_dump(mode="json") for view in book.campaigns.values()],
        "counted": book.counted,
        "limits": [limits.model_dump(mode="json") for limits in book.limits.values()],
        "blocked": None if book.blocked is None else [book.blocked[0], book.blocked[1].isoformat()],
        "sessions": [view.model_dump(mode="json") for view in book.sessions.values()],
    }


def _amount(value: Any) -> int:
    if type(value) is not int:
        raise SnapshotError(f"expected an integer, got {value!r:.40}")
    return value


def _load(body: dict[str, Any]) -> QueryState:
    state = QueryState(kept=count(body["kept"]))
    for player, item in mapping(body["books"]).items():
        raw = mapping(item)
        book = Book()
        for entry in items(raw["balances"]):
            currency, mode, available, held = items(entry, 4)
            book.balances[(text(currency), _MODES(mode))] = (_amount(available), _amount(held))
        for entry in items(raw["rounds"]):
            view = RoundView.model_validate(mapping(entry))
            book.rounds[view.round_id] = view
        for entry in items(raw["early"]):
            rid, before, after = items(entry, 3)
            book.early[text(rid)] = (optional(_amount)(before), optional(_amount)(after))
        _standing(book, raw)
        state.books[text(player)] = book
    return state


def _standing(book: Book, raw: dict[str, Any]) -> None:
    """A v3 book's campaigns, counted keys, limits, block and sessions (none before v3)."""
    for entry in items(raw.get("campaigns", [])):
        campaign = CampaignView.model_validate(mapping(entry))
        book.campaigns[campaign.campaign_id] = campaign
    book.counted = [text(key) for key in items(raw.get("counted", []))]
    for entry in items(raw.get("limits", [])):
        limits = Limits.model_validate(mapping(entry))
        book.limits[limits.currency] = limits
    blocked = raw.get("blocked")
    if blocked is not None:
        reason, at = items(blocked, 2)
        book.blocked = (text(reason), time(at))
    for entry in items(raw.get("sessions", [])):
        session = SessionView.model_validate(mapping(entry))
        book.sessions[session.table_id] = session
