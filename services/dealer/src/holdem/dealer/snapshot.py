"""The dealer's state as a snapshot (ADR 010): versioned JSON, every field checked when loaded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields
from datetime import datetime
from typing import Any, Final

import orjson

from holdem.core.contracts import ContractError, DeckSealed, Mode, dump, parse
from holdem.dealer.pmap import PMap
from holdem.dealer.state import CLOSED, DealerState, Phase, Round

SNAPSHOT_VERSION: Final = 1
SERVICE: Final = "dealer"


class SnapshotError(ValueError):
    """Bytes that are not a snapshot this dealer can load: not JSON, another service's or an
    unknown version, or a field of the wrong type. A snapshot topic is an input like any other."""


def dump_state(state: DealerState) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state."""
    body = {
        "service": SERVICE,
        "version": SNAPSHOT_VERSION,
        "rounds": [_round(state.rounds[round_id]) for round_id in sorted(state.rounds)],
        "commands": sorted([*key, *answer] for key, answer in state.commands.items()),
        "closed": {player: list(ids) for player, ids in sorted(state.closed.items())},
        "used": {player: list(ids) for player, ids in sorted(state.used.items())},
    }
    return orjson.dumps(body)


def load_state(raw: bytes) -> DealerState:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""
    try:
        body = orjson.loads(raw)
        _check_envelope(body)
        rounds: PMap[str, Round] = PMap()
        for item in _list(body["rounds"]):
            round_ = _load_round(item)
            rounds = rounds.set(round_.round_id, round_)
        commands: PMap[tuple[str, str], tuple[str, str]] = PMap()
        for item in _list(body["commands"]):
            player_id, command_id, round_id, kind = (_text(v) for v in _list(item, 4))
            commands = commands.set((player_id, command_id), (round_id, kind))
        return DealerState(
            rounds=rounds,
            open=frozenset(r.round_id for r in rounds.values() if _is_open(r)),
            commands=commands,
            closed=_orders(body["closed"]),
            used=_orders(body["used"]),
        )
    except SnapshotError:
        raise
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ContractError) as error:
        raise SnapshotError(f"not a dealer snapshot: {type(error).__name__}: {error}") from None


def _check_envelope(body: Any) -> None:
    if not isinstance(body, dict) or body.get("service") != SERVICE:
        raise SnapshotError("not a dealer snapshot")
    if type(body.get("version")) is not int or body["version"] != SNAPSHOT_VERSION:
        raise SnapshotError(f"unknown dealer snapshot version {body.get('version')!r}")


def _is_open(r: Round) -> bool:
    return r.phase is not None and r.phase not in CLOSED


def _round(r: Round) -> dict[str, Any]:
    """The round's fields that differ from their default; the sealed deck as its wire record."""
    out: dict[str, Any] = {}
    for f in fields(Round):
        value = getattr(r, f.name)
        if f.default is not MISSING and value == f.default:
            continue
        out[f.name] = dump(value).decode() if isinstance(value, DeckSealed) else value
    return out


def _text(value: Any) -> str:
    if type(value) is not str:
        raise SnapshotError(f"expected a string, got {value!r:.40}")
    return value


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise SnapshotError(f"expected a count, got {value!r:.40}")
    return value


def _time(value: Any) -> datetime:
    at = datetime.fromisoformat(_text(value))
    if at.tzinfo is None:
        raise SnapshotError(f"a time without its zone: {value!r:.40}")
    return at


def _sealed(value: Any) -> DeckSealed:
    record = parse("vault", _text(value))
    if not isinstance(record, DeckSealed):
        raise SnapshotError("a round's sealed deck is not a DeckSealed record")
    return record


def _optional(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


_ROUND: dict[str, Callable[[Any], Any]] = {
    "round_id": _text,
    "player_id": _text,
    "phase": _optional(lambda v: Phase(_text(v))),
    "correlation_id": _optional(_text),
    "currency": _text,
    "mode": lambda v: Mode(_text(v)),
    "ante": _count,
    "aa_bonus": _count,
    "placed_at": _optional(_time),
    "dealt_at": _optional(_time),
    "decided_at": _optional(_time),
    "sealed": _optional(_sealed),
    "commitment": _text,
    "malfunction_id": _optional(_text),
    "malfunction_reason": _text,
}


def _load_round(item: Any) -> Round:
    if not isinstance(item, dict) or not item.keys() <= _ROUND.keys():
        raise SnapshotError(f"not a round: {item!r:.80}")
    return Round(**{name: _ROUND[name](value) for name, value in item.items()})


def _list(value: Any, size: int | None = None) -> list[Any]:
    if not isinstance(value, list) or (size is not None and len(value) != size):
        raise SnapshotError(f"expected a list{f' of {size}' if size else ''}: {value!r:.40}")
    return value


def _orders(value: Any) -> PMap[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise SnapshotError("expected an object of player ids")
    orders: PMap[str, tuple[str, ...]] = PMap()
    for player_id, ids in value.items():
        orders = orders.set(player_id, tuple(_text(v) for v in _list(ids)))
    return orders
