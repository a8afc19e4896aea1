"""The dealer's state as a snapshot (ADR 010): versioned JSON whose shape and checks are derived
from the state's own types (pydantic, as the contracts), so a field added to ``Round`` or
``Session`` is snapshotted and checked without a line here.

v4: the players' pending forced decks (test mode, ADR 030) and a round's ``forced`` flag; a v3
snapshot is a v4 one with none. v3: the sealed deck as a nested record. v2 (sessions, ADR 020)
and v1 (none) still load: they differ from v3 only in keeping the sealed deck as its wire
text."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Final, Literal

import orjson
from pydantic import Field, TypeAdapter

from holdem.core.cards import Card
from holdem.core.snapshot_codec import SnapshotError, decoding, load_versioned, record
from holdem.dealer.state import CLOSED, DealerState, Round, Session

SNAPSHOT_VERSION: Final = 4
SERVICE: Final = "dealer"
__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "dump_state", "load_state"]


@dataclass(frozen=True, slots=True)
class Body:
    """A snapshot: the state's fields (keys of pairs written as rows; ``open`` is recounted)."""

    service: Literal["dealer"]
    version: Annotated[int, Field(strict=True, ge=4, le=4)]  # a Literal[4] would take 4.0
    rounds: list[Round]
    commands: list[tuple[str, str, str, str]]  # player_id, command_id, round_id, command type
    closed: dict[str, tuple[str, ...]]
    used: dict[str, tuple[str, ...]]
    sessions: list[Session]
    ended: dict[str, tuple[str, ...]]
    pending: dict[str, str] = field(default_factory=dict)  # bets the wallet has not answered
    settled_upto: datetime | None = None  # the watchdog's evidence (ADR 025)
    # player -> the card codes of his pending forced deck, oldest first (ADR 030)
    forced: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)


BODY: Final = TypeAdapter(Body)


def dump_state(state: DealerState) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state."""
    body = Body(
        service=SERVICE,
        version=SNAPSHOT_VERSION,
        rounds=[state.rounds[round_id] for round_id in sorted(state.rounds)],
        commands=sorted((*key, *answer) for key, answer in state.commands.items()),
        closed=dict(sorted(state.closed.items())),
        used=dict(sorted(state.used.items())),
        sessions=[state.sessions[key] for key in sorted(state.sessions)],
        ended=dict(sorted(state.ended.items())),
        pending=dict(sorted(state.pending.items())),
        settled_upto=state.settled_upto,
        forced=[(player, tuple(int(c) for c in codes)) for player, codes in state.forced.items()],
    )
    return BODY.dump_json(body, exclude_defaults=True)


def load_state(raw: bytes) -> DealerState:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""
    return decoding(
        SERVICE, lambda: _state(load_versioned(BODY, raw, SERVICE, SNAPSHOT_VERSION, UPGRADES))
    )


def _v3(document: dict[str, Any]) -> bytes:
    """A v3 document as the v4 one it would be: no forced deck pending, no round forced."""
    return orjson.dumps({**document, "version": SNAPSHOT_VERSION})


def _upgraded(document: dict[str, Any]) -> bytes:
    """A v1 or v2 document as the v4 one it would be (v1: no sessions yet)."""
    rounds = document["rounds"]
    if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
        raise SnapshotError(f"not a list of rounds: {rounds!r:.80}")
    for item in rounds:
        if "sealed" in item:
            item["sealed"] = record(item["sealed"])
    sessions: dict[str, Any] = {"sessions": [], "ended": {}} if document["version"] == 1 else {}
    return orjson.dumps({**document, **sessions, "version": SNAPSHOT_VERSION})


def _state(body: Body) -> DealerState:
    rounds = {r.round_id: r for r in body.rounds}
    return DealerState(
        rounds=rounds,
        open={r.round_id for r in rounds.values() if r.phase is not None and r.phase not in CLOSED},
        commands={
            (player, command): (round_id, kind) for player, command, round_id, kind in body.commands
        },
        closed=body.closed,
        used=body.used,
        sessions={(s.player_id, s.table_id): s for s in body.sessions},
        ended=body.ended,
        pending=dict(body.pending),
        settled_upto=body.settled_upto,
        forced={player: tuple(Card(code) for code in codes) for player, codes in body.forced},
    )


UPGRADES: Final = {
    1: _upgraded,
    2: _upgraded,
    3: _v3,
}  # older versions, read as the current one they would be
