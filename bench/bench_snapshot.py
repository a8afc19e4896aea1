"""Snapshots of 1,000 players each with an open round: dump and load time and size per service,
beside the baseline of folding the events that built the state (what a start without one does),
and the snapshot's records on the topic in format 1 and format 3 (ADR 048): bytes, time to write
and to read back.

    uv run --frozen python bench/bench_snapshot.py 57   # 57 settled rounds a player"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from bench_replay import deposit, round_events, wallet_events

from holdem.core.contracts import Dealt, Message
from holdem.dealer import snapshot as dealer_snapshot
from holdem.dealer import state as dealer_state
from holdem.runtime.snapshots import Snapshot, assemble
from holdem.settlement import snapshot as settlement_snapshot
from holdem.settlement import state as settlement_state
from holdem.wallet import snapshot as wallet_snapshot
from holdem.wallet import state as wallet_state

PLAYERS = 1_000
BALANCE = 10**9


def history(closed: int) -> dict[str, list[Message]]:
    """Each service's input: ``closed`` called and settled rounds per player, then one open
    (dealt, undecided) round each."""
    logs: dict[str, list[Message]] = {"dealer": [], "wallet": [], "settlement": []}
    for p in range(PLAYERS):
        player = f"p{p:04d}"
        logs["wallet"].append(deposit(player, BALANCE))
        balance = BALANCE
        for n in range(closed + 1):
            sealed, bet, dealt, called, settled = round_events(player, f"{player}.r{n}")
            money = wallet_events(player, f"{player}.r{n}", settled.total_return, balance)  # type: ignore[attr-defined]
            if n == closed:  # the open round: dealt, its call still held
                logs["dealer"] += [sealed, bet, dealt]
                logs["settlement"] += [bet, dealt]
                logs["wallet"] += [*money[:2], dealt]
                continue
            balance = money[-1].available  # type: ignore[attr-defined]
            logs["dealer"] += [sealed, bet, dealt, called, settled]
            logs["settlement"] += [bet, dealt, called, settled]
            logs["wallet"] += [*money[:3], dealt, called, money[3]]
    return logs


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def measure(name: str, codec: ModuleType, state_module: ModuleType, log: list[Message]) -> None:
    def fold() -> Any:
        state = state_module.initial_state()
        for event in log:
            state = state_module.evolve(state, event)
        return state

    state, folding = timed(fold)
    raw, dumping = timed(lambda: codec.dump_state(state))
    loaded, loading = timed(lambda: codec.load_state(raw))
    assert loaded == state, f"{name}: the snapshot does not load back the same state"
    open_rounds = sum(1 for e in log if isinstance(e, Dealt)) and PLAYERS
    print(
        f"{name:10} {open_rounds:,} open players: dump {dumping * 1e3:7.1f} ms, "
        f"load {loading * 1e3:7.1f} ms, {len(raw) / 1e6:5.2f} MB | baseline: fold of "
        f"{len(log):,} events {folding * 1e3:7.1f} ms"
    )
    # The records on the snapshot topic (ADR 048): format 1 (the state as a JSON string, parts
    # in base64) and format 3 (zlib), each written and read back by the runtime's own code.
    snapshot = Snapshot(name, 0, {"t": 0}, raw)
    for label, compressed in (("format 1", False), ("format 3", True)):
        records, writing = timed(lambda c=compressed: snapshot.to_records(c))  # type: ignore[misc]
        values = [value for _, value in records]
        back, reading = timed(lambda v=values: Snapshot.from_bytes(assemble(v), name, 0))  # type: ignore[misc]
        assert back == snapshot
        print(
            f"{'':10} on the topic, {label}: {sum(map(len, values)) / 1e6:5.2f} MB in "
            f"{len(values)} records, written {writing * 1e3:6.1f} ms, read {reading * 1e3:6.1f} ms"
        )


if __name__ == "__main__":
    closed = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 10
    logs, building = timed(lambda: history(closed))
    print(f"history: {PLAYERS:,} players x {closed} settled rounds + 1 open ({building:.1f}s)")
    gc.collect()
    gc.freeze()  # the logs are the bench's, not the service's: keep them out of the GC's scans
    measure("dealer", dealer_snapshot, dealer_state, logs["dealer"])
    measure("wallet", wallet_snapshot, wallet_state, logs["wallet"])
    measure("settlement", settlement_snapshot, settlement_state, logs["settlement"])
