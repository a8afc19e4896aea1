"""The wallet's state as a snapshot (ADR 010): versioned JSON, every field checked when loaded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, get_args

import orjson

from holdem.core.contracts import Called, Folded, Mode, dump, parse
from holdem.core.contracts.seamless import CreditRequested, DebitRequested, RollbackRequested
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
from holdem.wallet.seamless_state import CLOSED, Bridge, Bridges, Status
from holdem.wallet.state import Account, CallState, Evidence, RoundStatus, Stake, State

# 3: the seamless bridges (ADR 015) and the rebets (ADR 018); an older snapshot is refused, so
# the state is rebuilt by a full replay (the rebets need the bets of the whole window).
SNAPSHOT_VERSION: Final = 3
SERVICE: Final = "wallet"
__all__ = ["SNAPSHOT_VERSION", "SnapshotError", "dump_state", "load_state"]


def dump_state(state: State) -> bytes:
    """The snapshot of ``state``: ``load_state`` gives back an equal state. ``commands`` is
    written within ``answered``."""
    applied: dict[str, list[str]] = {}
    for player_id, key in sorted(state.applied):
        applied.setdefault(player_id, []).append(key)
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
        "applied": applied,
        "horizon": state.horizon,
        "bridges": {
            "rounds": {k: _bridge(b) for k, b in state.bridges.rounds.items()},
            "closed": state.bridges.closed,
        },
        "rebets": {
            player: [[table, ante, bonus] for table, (ante, bonus) in tables.items()]
            for player, tables in state.rebets.items()
        },
    }
    return orjson.dumps(body)


def load_state(raw: bytes) -> State:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""

    def load() -> State:
        body = orjson.loads(raw)
        return _load(check_envelope(body, SERVICE, SNAPSHOT_VERSION))

    return decoding(SERVICE, load)


def _load(body: dict[str, Any]) -> State:
    state = State()
    for item in items(body["accounts"]):
        player_id, currency, mode, available, held = items(item, 5)
        key = (text(player_id), text(currency), Mode(text(mode)))
        state.accounts[key] = Account(count(available), count(held))
    for item in items(body["house"]):
        currency, mode, amount = items(item, 3)
        if type(amount) is not int:  # the house's balance may be negative
            raise SnapshotError(f"expected an amount in minor units, got {amount!r:.40}")
        state.house[(text(currency), Mode(text(mode)))] = amount
    state.rounds = {text(k): _load_stake(v) for k, v in mapping(body["rounds"]).items()}
    state.open_rounds = {k: text(v) for k, v in mapping(body["open_rounds"]).items()}
    for item in items(body["evidence"]):
        player_id, round_id, evidence = items(item, 3)
        state.evidence[(text(player_id), text(round_id))] = _load_evidence(evidence)
    state.closed = {k: [text(v) for v in items(ids)] for k, ids in mapping(body["closed"]).items()}
    for player_id, seen in mapping(body["answered"]).items():
        order = state.answered.setdefault(player_id, [])
        for item in items(seen):
            command_id, at, fingerprint = (text(v) for v in items(item, 3))
            order.append((command_id, time(at)))
            state.commands[(player_id, command_id)] = fingerprint
    for player_id, keys in mapping(body["applied"]).items():
        state.applied.update((player_id, text(key)) for key in items(keys))
    state.horizon = {k: time(v) for k, v in mapping(body["horizon"]).items()}
    state.bridges = _load_bridges(mapping(body["bridges"]))
    for player_id, tables in mapping(body["rebets"]).items():
        kept = state.rebets.setdefault(player_id, {})
        for item in items(tables):
            table_id, ante, bonus = items(item, 3)
            kept[text(table_id)] = (count(ante), count(bonus))
    return state


def _bridge(b: Bridge) -> list[Any]:
    request = None if b.request is None else dump(b.request).decode()
    return [dump(b.debit).decode(), b.status, b.debit_applied, request, b.sent_at]


def _load_bridges(body: dict[str, Any]) -> Bridges:
    bridges = Bridges()
    for round_id, item in mapping(body["rounds"]).items():
        debit, status, applied, request, sent_at = items(item, 5)
        bridge = Bridge(
            _request(debit, DebitRequested),
            one_of(*get_args(Status))(status),
            one_of(False, True)(applied),
            None if request is None else _request(request, CreditRequested, RollbackRequested),
            optional(time)(sent_at),
        )
        if bridge.round_id != round_id:
            raise SnapshotError(f"bridge {round_id} holds the debit of {bridge.round_id}")
        bridges.rounds[round_id] = bridge
        if bridge.status not in CLOSED:
            bridges.open.add(round_id)
        if bridge.status == "debit_pending":
            bridges.pending[bridge.player_id] = round_id
    closed = mapping(body["closed"]).items()
    bridges.closed = {k: [text(v) for v in items(ids)] for k, ids in closed}
    return bridges


def _request(raw: Any, *kinds: type[Any]) -> Any:
    message = parse("wallet", text(raw))
    if not isinstance(message, kinds):
        raise SnapshotError(f"a bridge holds a {message.type}, not a {kinds[0].__name__}")
    return message


def _stake(stake: Stake) -> list[Any]:
    return [getattr(stake, name) for name in _STAKE]


def _evidence(e: Evidence) -> list[Any]:
    reveal = None if e.reveal is None else dump(e.reveal).decode()
    return [e.commitment, reveal, e.unverifiable]


_STAKE: dict[str, Callable[[Any], Any]] = {
    "player_id": text,
    "currency": text,
    "mode": lambda v: Mode(text(v)),
    "ante": count,
    "aa_bonus": count,
    "call_hold": count,
    "call": one_of(*get_args(CallState)),
    "status": one_of(*get_args(RoundStatus)),
    "paid_by": optional(text),
}


def _load_stake(item: Any) -> Stake:
    values = items(item, len(_STAKE))
    return Stake(
        **{name: check(v) for (name, check), v in zip(_STAKE.items(), values, strict=True)}
    )


def _load_evidence(item: Any) -> Evidence:
    commitment, reveal, unverifiable = items(item, 3)
    decision = None if reveal is None else parse("rounds", text(reveal))
    if decision is not None and not isinstance(decision, Called | Folded):
        raise SnapshotError("an evidence's reveal is not a Called or Folded record")
    return Evidence(optional(text)(commitment), decision, one_of(False, True)(unverifiable))
