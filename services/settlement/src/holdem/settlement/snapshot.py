"""Settlement's state as a snapshot (ADR 010): versioned JSON whose shape and checks are derived
from the state's own types (pydantic, as the contracts): a field added to ``RoundState``,
``Fault`` or ``HistoryEntry`` is snapshotted and checked without a line here.

v2: a round's records nested, rounds, faults and history entries as objects. v1 still loads,
read as the v2 document it would be (``_upgraded``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Any, Final, Literal

import orjson
from pydantic import Field, NonNegativeInt, TypeAdapter

from holdem.core.snapshot import (
    SnapshotError,
    decoding,
    items,
    load_versioned,
    mapping,
    named,
    record,
)
from holdem.settlement.state import HistoryEntry, RoundState, SettlementState

SNAPSHOT_VERSION: Final = 2
SERVICE: Final = "settlement"
__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "dump_state", "load_state"]


@dataclass(frozen=True, slots=True)
class Body:
    """A snapshot: the state's fields (rounds as a list: each names its key; ``open_rounds``
    is recounted from them)."""

    service: Literal["settlement"]
    version: Annotated[int, Field(strict=True, ge=2, le=2)]  # a Literal[2] would take 2.0
    rounds: list[RoundState]
    ended: dict[str, list[str]]
    history: dict[str, tuple[HistoryEntry, ...]]
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

_ROUND_V1: Final = ("round_id", "player_id", "bet", "dealt", "decision", "faults", "status",
                    "settled_id", "mismatch_id")  # fmt: skip
_RECORDS_V1: Final = ("bet", "dealt", "decision")  # kept as their wire text
_ENTRY_V1: Final = tuple(f.name for f in fields(HistoryEntry))  # v1 wrote them in this order


def _upgraded(document: dict[str, Any]) -> bytes:
    """A v1 document as the v2 one it would be: positional rows as objects, records' wire text
    as the records (the v2 checks then judge every field)."""
    rounds = [named(row, _ROUND_V1) for row in items(document["rounds"])]
    for r in rounds:
        r.update({name: record(r[name]) for name in _RECORDS_V1})
        r["faults"] = [named(f, ("malfunction_id", "source", "reason")) for f in items(r["faults"])]
    history = {
        player: [named(entry, _ENTRY_V1) for entry in items(entries)]
        for player, entries in mapping(document["history"]).items()
    }
    v2 = {**document, "version": SNAPSHOT_VERSION, "rounds": rounds, "history": history}
    return orjson.dumps(v2)


UPGRADES: Final = {1: _upgraded}  # older versions, read as the current one they would be
