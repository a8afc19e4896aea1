"""Settlement's state as a snapshot (ADR 010): versioned JSON, every field checked when loaded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, Final

import orjson

from holdem.core.contracts import BetPlaced, Called, Dealt, Folded, dump, parse
from holdem.core.snapshot import (
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
from holdem.settlement.state import Fault, HistoryEntry, RoundState, SettlementState

SNAPSHOT_VERSION: Final = 1
SERVICE: Final = "settlement"
__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "dump_state", "load_state"]


def dump_state(state: SettlementState) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state (``open_rounds`` is
    recounted from the rounds)."""
    body = {
        "service": SERVICE,
        "version": SNAPSHOT_VERSION,
        "rounds": [_round(r) for r in state.rounds.values()],
        "ended": state.ended,
        "history": {
            player: [[getattr(e, name) for name in _ENTRY] for e in entries]
            for player, entries in state.history.items()
        },
        "history_limit": state.history_limit,
    }
    return orjson.dumps(body)


def load_state(raw: bytes) -> SettlementState:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""
    return decoding(
        SERVICE, lambda: _load(check_envelope(orjson.loads(raw), SERVICE, SNAPSHOT_VERSION))
    )


def _load(body: dict[str, Any]) -> SettlementState:
    state = SettlementState(history_limit=count(body["history_limit"]))
    for item in items(body["rounds"]):
        round_ = _load_round(item)
        state.rounds[(round_.player_id, round_.round_id)] = round_
    state.open_rounds = sum(not r.terminal for r in state.rounds.values())
    for player_id, ids in mapping(body["ended"]).items():
        state.ended[player_id] = [text(round_id) for round_id in items(ids)]
    for player_id, entries in mapping(body["history"]).items():
        state.history[player_id] = tuple(_load_entry(entry) for entry in items(entries))
    return state


def _wire(event: Any) -> str | None:
    return None if event is None else dump(event).decode()


def _round(r: RoundState) -> list[Any]:
    faults = [[f.malfunction_id, f.source, f.reason] for f in r.faults]
    events = [_wire(r.bet), _wire(r.dealt), _wire(r.decision)]
    return [r.round_id, r.player_id, *events, faults, r.status, r.settled_id, r.mismatch_id]


def _event(*kinds: type) -> Callable[[Any], Any]:
    def load(value: Any) -> Any:
        if value is None:
            return None
        event = parse("rounds", text(value))
        if not isinstance(event, kinds):
            raise SnapshotError(f"a round holds a {type(event).__name__} where it keeps {kinds}")
        return event

    return load


def _load_round(item: Any) -> RoundState:
    round_id, player_id, bet, dealt, decision, faults, status, settled_id, mismatch_id = items(
        item, 9
    )
    return RoundState(
        round_id=text(round_id),
        player_id=text(player_id),
        bet=_event(BetPlaced)(bet),
        dealt=_event(Dealt)(dealt),
        decision=_event(Called, Folded)(decision),
        faults=tuple(Fault(*(text(v) for v in items(f, 3))) for f in items(faults)),
        status=one_of("open", "settled", "voided")(status),
        settled_id=optional(text)(settled_id),
        mismatch_id=optional(text)(mismatch_id),
    )


def _cards(value: Any) -> tuple[str, ...]:
    return tuple(text(card) for card in items(value))


_ENTRY: dict[str, Callable[[Any], Any]] = {
    "round_id": text,
    "currency": text,
    "pay_table": text,
    "ante": count,
    "aa_bonus": count,
    "call": count,
    "decision": one_of(None, "call", "fold"),
    "auto": one_of(False, True),
    "result": one_of("win", "lose", "push", "fold", "voided"),
    "ante_return": count,
    "call_return": count,
    "bonus_return": count,
    "total_return": count,
    "player_cards": _cards,
    "flop": _cards,
    "dealer_cards": _cards,
    "turn_river": _cards,
    "placed_at": optional(time),
    "decided_at": optional(time),
    "ended_at": time,
    "void_reason": optional(text),
}


# The snapshot lists an entry's fields in the dataclass's order.
assert tuple(_ENTRY) == tuple(f.name for f in fields(HistoryEntry)), "_ENTRY lags HistoryEntry"


def _load_entry(item: Any) -> HistoryEntry:
    values = items(item, len(_ENTRY))
    return HistoryEntry(
        **{k: check(v) for (k, check), v in zip(_ENTRY.items(), values, strict=True)}
    )
