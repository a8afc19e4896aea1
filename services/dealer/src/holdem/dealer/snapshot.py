"""The dealer's state as a snapshot (ADR 010): versioned JSON, every field checked when loaded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, Final

import orjson

from holdem.core.contracts import DeckSealed, Mode, TimeoutPolicy, dump, parse
from holdem.core.snapshot import (
    SnapshotError,
    check_envelope,
    count,
    decoding,
    items,
    mapping,
    optional,
    text,
    time,
)
from holdem.dealer.pmap import PMap
from holdem.dealer.state import CLOSED, DealerState, Phase, Round, Session

# v2: sessions (open ones and the last ended ids per player) and a round's table and session
# (ADR 020). A v1 snapshot is still loaded: it was written before sessions, so it has none.
SNAPSHOT_VERSION: Final = 2
SERVICE: Final = "dealer"
__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "dump_state", "load_state"]


def dump_state(state: DealerState) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state."""
    body = {
        "service": SERVICE,
        "version": SNAPSHOT_VERSION,
        "rounds": [_round(state.rounds[round_id]) for round_id in sorted(state.rounds)],
        "commands": sorted([*key, *answer] for key, answer in state.commands.items()),
        "closed": {player: list(ids) for player, ids in sorted(state.closed.items())},
        "used": {player: list(ids) for player, ids in sorted(state.used.items())},
        "sessions": [_session(state.sessions[key]) for key in sorted(state.sessions)],
        "ended": {player: list(ids) for player, ids in sorted(state.ended.items())},
    }
    if state.pending:  # bets the wallet has not answered (ADR 022); absent: none
        body["pending"] = dict(sorted(state.pending.items()))
    if state.settled_upto is not None:  # the watchdog's evidence (ADR 023); absent: none
        body["settled_upto"] = state.settled_upto
    return orjson.dumps(body)


def load_state(raw: bytes) -> DealerState:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""
    return decoding(SERVICE, lambda: _load(_envelope(orjson.loads(raw))))


def _envelope(body: Any) -> dict[str, Any]:
    version = body.get("version") if isinstance(body, dict) else None
    if version == 1 and type(version) is int:
        return {**check_envelope(body, SERVICE, 1), "sessions": [], "ended": {}}
    return check_envelope(body, SERVICE, SNAPSHOT_VERSION)


def _load(body: dict[str, Any]) -> DealerState:
    rounds: PMap[str, Round] = PMap()
    for item in items(body["rounds"]):
        round_ = _load_round(item)
        rounds = rounds.set(round_.round_id, round_)
    commands: PMap[tuple[str, str], tuple[str, str]] = PMap()
    for item in items(body["commands"]):
        player_id, command_id, round_id, kind = (text(v) for v in items(item, 4))
        commands = commands.set((player_id, command_id), (round_id, kind))
    sessions: PMap[tuple[str, str], Session] = PMap()
    for item in items(body["sessions"]):
        session = _load_session(item)
        sessions = sessions.set((session.player_id, session.table_id), session)
    return DealerState(
        rounds=rounds,
        open=frozenset(r.round_id for r in rounds.values() if _is_open(r)),
        commands=commands,
        closed=_orders(body["closed"]),
        used=_orders(body["used"]),
        sessions=sessions,
        ended=_orders(body["ended"]),
        pending=_pending(body.get("pending", {})),
        settled_upto=optional(time)(body.get("settled_upto")),
    )


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


def _sealed(value: Any) -> DeckSealed:
    record = parse("vault", text(value))
    if not isinstance(record, DeckSealed):
        raise SnapshotError("a round's sealed deck is not a DeckSealed record")
    return record


_ROUND: dict[str, Callable[[Any], Any]] = {
    "round_id": text,
    "player_id": text,
    "phase": optional(lambda v: Phase(text(v))),
    "correlation_id": optional(text),
    "currency": text,
    "mode": lambda v: Mode(text(v)),
    "ante": count,
    "aa_bonus": count,
    "placed_at": optional(time),
    "dealt_at": optional(time),
    "decided_at": optional(time),
    "sealed": optional(_sealed),
    "commitment": text,
    "malfunction_id": optional(text),
    "malfunction_reason": text,
    "decision_timeout_s": optional(count),
    "timeout_policy": optional(lambda v: TimeoutPolicy(text(v))),
    "table_id": optional(text),
    "session_id": optional(text),
}
_SESSION: dict[str, Callable[[Any], Any]] = {
    "session_id": text,
    "player_id": text,
    "table_id": text,
    "idle_timeout_s": count,
    "started_at": time,
    "last_active": time,
    "mode": lambda v: Mode(text(v)),
}


def _session(s: Session) -> dict[str, Any]:
    return {f.name: getattr(s, f.name) for f in fields(Session)}


def _load_session(item: Any) -> Session:
    if mapping(item).keys() != _SESSION.keys():
        raise SnapshotError(f"not a session: {item!r:.80}")
    return Session(**{name: _SESSION[name](value) for name, value in item.items()})


def _load_round(item: Any) -> Round:
    if not mapping(item).keys() <= _ROUND.keys():
        raise SnapshotError(f"not a round: {item!r:.80}")
    return Round(**{name: _ROUND[name](value) for name, value in item.items()})


def _pending(value: Any) -> PMap[str, str]:
    pending: PMap[str, str] = PMap()
    for player_id, round_id in mapping(value).items():
        pending = pending.set(text(player_id), text(round_id))
    return pending


def _orders(value: Any) -> PMap[str, tuple[str, ...]]:
    orders: PMap[str, tuple[str, ...]] = PMap()
    for player_id, ids in mapping(value).items():
        orders = orders.set(player_id, tuple(text(v) for v in items(ids)))
    return orders
