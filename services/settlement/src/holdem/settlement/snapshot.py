"""Settlement's state as a snapshot (ADR 010): versioned JSON whose shape and checks are derived
from the state's own types (pydantic, as the contracts): a field added to ``RoundState``,
``Fault`` or ``HistoryEntry`` is snapshotted and checked without a line here.

v2: a round's records nested (v1 kept their wire text), faults as objects; rounds and history
entries are rows of their fields, as in v1. v1 still loads,
read as the v2 document it would be (``_upgraded``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import orjson
from pydantic import Field, NonNegativeInt, TypeAdapter

from holdem.core.snapshot_codec import (
    SnapshotError,
    decoding,
    items,
    load_versioned,
    named,
    record,
    row,
)
from holdem.settlement.state import HistoryEntry, RoundState, SettlementState

if TYPE_CHECKING:
    RoundRow = RoundState
    EntryRow = HistoryEntry
else:  # written as rows: a player has up to CLOSED_KEPT rounds and history_limit entries
    RoundRow = row(RoundState)
    EntryRow = row(HistoryEntry)

SNAPSHOT_VERSION: Final = 2
SERVICE: Final = "settlement"
__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "dump_state", "load_state"]


@dataclass(frozen=True, slots=True)
class Body:
    """A snapshot: the state's fields (rounds as a list: each names its key; ``open_rounds``
    is recounted from them)."""

    service: Literal["settlement"]
    version: Annotated[int, Field(strict=True, ge=2, le=2)]  # a Literal[2] would take 2.0
    rounds: list[RoundRow]
    ended: dict[str, list[str]]
    history: dict[str, tuple[EntryRow, ...]]
    history_limit: NonNegativeInt


BODY: Final = TypeAdapter(Body)


def dump_state(state: SettlementState) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state."""
    body = Body(
        service=SERVICE,
        version=SNAPSHOT_VERSION,
        rounds=list(state.rounds.values()),
        ended=state.ended,
        history=state.history,
        history_limit=state.history_limit,
    )
    return BODY.dump_json(body)


def load_state(raw: bytes) -> SettlementState:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""
    return decoding(
        SERVICE, lambda: _state(load_versioned(BODY, raw, SERVICE, SNAPSHOT_VERSION, UPGRADES))
    )


def _state(body: Body) -> SettlementState:
    rounds = {(r.player_id, r.round_id): r for r in body.rounds}
    return SettlementState(
        rounds=rounds,
        ended=body.ended,
        history=body.history,
        history_limit=body.history_limit,
        open_rounds=sum(not r.terminal for r in rounds.values()),
    )


# --- v1 ---------------------------------------------------------------------------------------


def _upgraded(document: dict[str, Any]) -> bytes:
    """A v1 document as the v2 one it would be: records' wire text as the records, faults as
    objects (the v2 checks then judge every field)."""
    rounds = [items(r, 9) for r in items(document["rounds"])]
    for r in rounds:
        r[2:5] = [record(text) for text in r[2:5]]  # bet, dealt, decision
        r[5] = [named(f, ("malfunction_id", "source", "reason")) for f in items(r[5])]
    return orjson.dumps({**document, "version": SNAPSHOT_VERSION, "rounds": rounds})


UPGRADES: Final = {1: _upgraded}  # older versions, read as the current one they would be
