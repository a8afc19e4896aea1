"""The wallet's state as a snapshot (ADR 010): versioned JSON, every field checked when loaded."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Final, get_args

import orjson

from holdem.core.contracts import Called, ContractError, Folded, Mode, dump, parse
from holdem.wallet.state import Account, CallState, Evidence, RoundStatus, Stake, State

SNAPSHOT_VERSION: Final = 1
SERVICE: Final = "wallet"


class SnapshotError(ValueError):
    """Bytes that are not a snapshot this wallet can load: not JSON, another service's or an
    unknown version, or a field of the wrong type. A snapshot topic is an input like any other."""


def dump_state(state: State) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state. ``applied`` and
    ``commands`` are not written: they are the contents of ``keys`` and ``answered``."""
    body = {
        "service": SERVICE,
        "version": SNAPSHOT_VERSION,
        "accounts": [[*key, a.available, a.held] for key, a in state.accounts.items()],
        "house": [[*key, amount] for key, amount in state.house.items()],
        "rounds": {round_id: _stake(stake) for round_id, stake in state.rounds.items()},
        "open_rounds": state.open_rounds,
        "evidence": [[*key, _evidence(e)] for key, e in state.evidence.items()],
        "closed": state.closed,
        "answered": {
            player: [
                [command_id, at, state.commands[(player, command_id)]] for command_id, at in seen
            ]
            for player, seen in state.answered.items()
        },
        "keys": state.keys,
        "horizon": state.horizon,
    }
    return orjson.dumps(body)


def load_state(raw: bytes) -> State:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""
    try:
        body = orjson.loads(raw)
        _check_envelope(body)
        return _load(body)
    except SnapshotError:
        raise
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ContractError) as error:
        raise SnapshotError(f"not a wallet snapshot: {type(error).__name__}: {error}") from None


def _check_envelope(body: Any) -> None:
    if not isinstance(body, dict) or body.get("service") != SERVICE:
        raise SnapshotError("not a wallet snapshot")
    if type(body.get("version")) is not int or body["version"] != SNAPSHOT_VERSION:
        raise SnapshotError(f"unknown wallet snapshot version {body.get('version')!r}")


def _load(body: dict[str, Any]) -> State:
    state = State()
    for item in _list(body["accounts"]):
        player_id, currency, mode, available, held = _list(item, 5)
        key = (_text(player_id), _text(currency), Mode(_text(mode)))
        state.accounts[key] = Account(_amount(available), _amount(held))
    for item in _list(body["house"]):
        currency, mode, amount = _list(item, 3)
        state.house[(_text(currency), Mode(_text(mode)))] = _amount(amount, signed=True)
    state.rounds = {_text(k): _load_stake(v) for k, v in _object(body["rounds"]).items()}
    state.open_rounds = {k: _text(v) for k, v in _object(body["open_rounds"]).items()}
    for item in _list(body["evidence"]):
        player_id, round_id, evidence = _list(item, 3)
        state.evidence[(_text(player_id), _text(round_id))] = _load_evidence(evidence)
    state.closed = {k: [_text(v) for v in _list(ids)] for k, ids in _object(body["closed"]).items()}
    for player_id, seen in _object(body["answered"]).items():
        order = state.answered.setdefault(player_id, [])
        for item in _list(seen):
            command_id, at, fingerprint = (_text(v) for v in _list(item, 3))
            order.append((command_id, _time(at)))
            state.commands[(player_id, command_id)] = fingerprint
    for player_id, keys in _object(body["keys"]).items():
        state.keys[player_id] = [_text(key) for key in _list(keys)]
        state.applied.update((player_id, key) for key in state.keys[player_id])
    state.horizon = {k: _time(v) for k, v in _object(body["horizon"]).items()}
    return state


def _stake(stake: Stake) -> list[Any]:
    return [getattr(stake, name) for name in _STAKE]


def _evidence(e: Evidence) -> list[Any]:
    reveal = None if e.reveal is None else dump(e.reveal).decode()
    return [e.commitment, reveal, e.unverifiable]


def _text(value: Any) -> str:
    if type(value) is not str:
        raise SnapshotError(f"expected a string, got {value!r:.40}")
    return value


def _amount(value: Any, signed: bool = False) -> int:
    if type(value) is not int or (value < 0 and not signed):
        raise SnapshotError(f"expected an amount in minor units, got {value!r:.40}")
    return value


def _time(value: Any) -> datetime:
    at = datetime.fromisoformat(_text(value))
    if at.tzinfo is None:
        raise SnapshotError(f"a time without its zone: {value!r:.40}")
    return at


def _choice(allowed: Any) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in get_args(allowed):
            raise SnapshotError(f"expected one of {get_args(allowed)}, got {value!r:.40}")
        return str(value)

    return check


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


_STAKE: dict[str, Callable[[Any], Any]] = {
    "player_id": _text,
    "currency": _text,
    "mode": lambda v: Mode(_text(v)),
    "ante": _amount,
    "aa_bonus": _amount,
    "call_hold": _amount,
    "call": _choice(CallState),
    "status": _choice(RoundStatus),
    "paid_by": _optional_text,
}


def _load_stake(item: Any) -> Stake:
    values = _list(item, len(_STAKE))
    return Stake(
        **{name: check(v) for (name, check), v in zip(_STAKE.items(), values, strict=True)}
    )


def _load_evidence(item: Any) -> Evidence:
    commitment, reveal, unverifiable = _list(item, 3)
    if type(unverifiable) is not bool:
        raise SnapshotError(f"expected true or false, got {unverifiable!r:.40}")
    decision = None if reveal is None else parse("rounds", _text(reveal))
    if decision is not None and not isinstance(decision, Called | Folded):
        raise SnapshotError("an evidence's reveal is not a Called or Folded record")
    return Evidence(_optional_text(commitment), decision, unverifiable)


def _list(value: Any, size: int | None = None) -> list[Any]:
    if not isinstance(value, list) or (size is not None and len(value) != size):
        raise SnapshotError(f"expected a list{f' of {size}' if size else ''}: {value!r:.40}")
    return value


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SnapshotError(f"expected an object: {value!r:.40}")
    return value
