"""Settlement's state as a snapshot (ADR 010): versioned JSON, every field checked when loaded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from datetime import datetime
from typing import Any, Final

import orjson

from holdem.core.contracts import BetPlaced, Called, ContractError, Dealt, Folded, dump, parse
from holdem.settlement.state import Fault, HistoryEntry, RoundState, SettlementState

SNAPSHOT_VERSION: Final = 1
SERVICE: Final = "settlement"


class SnapshotError(ValueError):
    """Bytes that are not a snapshot settlement can load: not JSON, another service's or an
    unknown version, or a field of the wrong type. A snapshot topic is an input like any other."""


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
    try:
        body = orjson.loads(raw)
        _check_envelope(body)
        state = SettlementState(history_limit=_count(body["history_limit"]))
        for item in _list(body["rounds"]):
            round_ = _load_round(item)
            state.rounds[(round_.player_id, round_.round_id)] = round_
        state.open_rounds = sum(not r.terminal for r in state.rounds.values())
        for player_id, ids in _object(body["ended"]).items():
            state.ended[player_id] = [_text(round_id) for round_id in _list(ids)]
        for player_id, entries in _object(body["history"]).items():
            state.history[player_id] = tuple(_load_entry(entry) for entry in _list(entries))
        return state
    except SnapshotError:
        raise
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ContractError) as error:
        raise SnapshotError(f"not a settlement snapshot: {type(error).__name__}: {error}") from None


def _check_envelope(body: Any) -> None:
    if not isinstance(body, dict) or body.get("service") != SERVICE:
        raise SnapshotError("not a settlement snapshot")
    if type(body.get("version")) is not int or body["version"] != SNAPSHOT_VERSION:
        raise SnapshotError(f"unknown settlement snapshot version {body.get('version')!r}")


def _wire(event: Any) -> str | None:
    return None if event is None else dump(event).decode()


def _round(r: RoundState) -> list[Any]:
    faults = [[f.malfunction_id, f.source, f.reason] for f in r.faults]
    events = [_wire(r.bet), _wire(r.dealt), _wire(r.decision)]
    return [r.round_id, r.player_id, *events, faults, r.status, r.settled_id, r.mismatch_id]


def _text(value: Any) -> str:
    if type(value) is not str:
        raise SnapshotError(f"expected a string, got {value!r:.40}")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise SnapshotError(f"expected a count, got {value!r:.40}")
    return value


def _time(value: Any) -> datetime:
    at = datetime.fromisoformat(_text(value))
    if at.tzinfo is None:
        raise SnapshotError(f"a time without its zone: {value!r:.40}")
    return at


def _event(*kinds: type) -> Callable[[Any], Any]:
    def load(value: Any) -> Any:
        if value is None:
            return None
        event = parse("rounds", _text(value))
        if not isinstance(event, kinds):
            raise SnapshotError(f"a round holds a {type(event).__name__} where it keeps {kinds}")
        return event

    return load


def _one_of(*allowed: Any) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not any(value == a and type(value) is type(a) for a in allowed):
            raise SnapshotError(f"expected one of {allowed}, got {value!r:.40}")
        return value

    return check


def _load_round(item: Any) -> RoundState:
    round_id, player_id, bet, dealt, decision, faults, status, settled_id, mismatch_id = _list(
        item, 9
    )
    return RoundState(
        round_id=_text(round_id),
        player_id=_text(player_id),
        bet=_event(BetPlaced)(bet),
        dealt=_event(Dealt)(dealt),
        decision=_event(Called, Folded)(decision),
        faults=tuple(Fault(*(_text(v) for v in _list(f, 3))) for f in _list(faults)),
        status=_one_of("open", "settled", "voided")(status),
        settled_id=_optional_text(settled_id),
        mismatch_id=_optional_text(mismatch_id),
    )


def _cards(value: Any) -> tuple[str, ...]:
    return tuple(_text(card) for card in _list(value))


_ENTRY: dict[str, Callable[[Any], Any]] = {
    "round_id": _text,
    "currency": _text,
    "pay_table": _text,
    "ante": _count,
    "aa_bonus": _count,
    "call": _count,
    "decision": _one_of(None, "call", "fold"),
    "auto": _one_of(False, True),
    "result": _one_of("win", "lose", "push", "fold", "voided"),
    "ante_return": _count,
    "call_return": _count,
    "bonus_return": _count,
    "total_return": _count,
    "player_cards": _cards,
    "flop": _cards,
    "dealer_cards": _cards,
    "turn_river": _cards,
    "placed_at": lambda v: None if v is None else _time(v),
    "decided_at": lambda v: None if v is None else _time(v),
    "ended_at": _time,
    "void_reason": _optional_text,
}


# The snapshot lists an entry's fields in the dataclass's order.
assert tuple(_ENTRY) == tuple(f.name for f in fields(HistoryEntry)), "_ENTRY lags HistoryEntry"


def _load_entry(item: Any) -> HistoryEntry:
    values = _list(item, len(_ENTRY))
    return HistoryEntry(
        **{k: check(v) for (k, check), v in zip(_ENTRY.items(), values, strict=True)}
    )


def _list(value: Any, size: int | None = None) -> list[Any]:
    if not isinstance(value, list) or (size is not None and len(value) != size):
        raise SnapshotError(f"expected a list{f' of {size}' if size else ''}: {value!r:.40}")
    return value


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SnapshotError(f"expected an object: {value!r:.40}")
    return value
