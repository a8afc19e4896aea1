"""The back office's projection as a child process (to kill -9), and the figures the audit's
records give beside those the database holds, for the tests to compare."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psycopg
from aiokafka import AIOKafkaConsumer, TopicPartition

from holdem.core.contracts import Settled
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.wire.connection import KafkaConnection, start_or_close
from holdem.core.wire.topics import Topics
from holdem.harness.audit import Record, rounds_of

PROJECTED = ("rounds", "wallet", "tables", "seamless_replies")


class ProjectionProcess:
    """``python -m holdem.backoffice.project`` on one topic prefix, as ``connection``."""

    def __init__(self, dsn: str, connection: KafkaConnection, prefix: str, log: Path) -> None:
        self.env = {
            **os.environ,
            **connection.env(),
            "HOLDEM_BACKOFFICE_DSN": dsn,
            "HOLDEM_BACKOFFICE_TOPIC_PREFIX": prefix,
            "HOLDEM_BACKOFFICE_METRICS_PORT": "0",
            "HOLDEM_BACKOFFICE_MAX_RECORDS": "100",
            "HOLDEM_BACKOFFICE_POLL_MS": "50",
        }
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "holdem.backoffice.project"],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.starts += 1

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(20)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


async def end_offsets(admin: KafkaConnection, topics: Topics, partitions: int) -> dict[Any, int]:
    consumer = AIOKafkaConsumer(**admin.kwargs(), isolation_level="read_committed")
    await start_or_close(consumer)
    try:
        names = [getattr(topics, role) for role in PROJECTED]
        wanted = [TopicPartition(t, p) for t in names for p in range(partitions)]
        ends = await consumer.end_offsets(wanted)
        return {(tp.topic, tp.partition): offset for tp, offset in ends.items()}
    finally:
        await consumer.stop()


async def caught_up(dsn: str, ends: dict[Any, int], timeout_s: float = 120.0) -> None:
    """Wait until the stored positions reach ``ends`` (AssertionError after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    behind: dict[Any, tuple[int, int]] = {}
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(dsn) as conn:
                stored = dict(
                    ((t, p), o)
                    for t, p, o in conn.execute(
                        "SELECT topic, partition, next_offset FROM tracking"
                    )
                )
        except psycopg.errors.UndefinedTable:
            # A projection (re)started under load may not have run its migrations yet: that
            # is "not caught up", within the same bound, not an error.
            stored = {}
        behind = {
            tp: (stored.get(tp, 0), end) for tp, end in ends.items() if stored.get(tp, 0) < end
        }
        if not behind:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the projection did not catch up: (stored, end) {behind}")


def audit_figures(records: Iterable[Record]) -> dict[str, Any]:
    """Counts and money totals from the audit's own reading of the run's records."""
    records = list(records)
    rounds = rounds_of(records)
    placed = [log for log in rounds.values() if log.bets]
    settled = [log.ends[0] for log in placed if log.ends and isinstance(log.ends[0], Settled)]
    moves = [
        r.message for r in records if r.role == "wallet" and isinstance(r.message, WalletEvent)
    ]
    amounts: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for m in moves:
        amounts[m.type] += m.amount
        counts[m.type] += 1
    return {
        "rounds": len(placed),
        "settled": len(settled),
        "voided": sum(1 for log in placed if log.ends and not isinstance(log.ends[0], Settled)),
        "stakes": sum(s.ante + s.aa_bonus + s.call for s in settled),
        "returns": sum(s.total_return for s in settled),
        "movements": len(moves),
        "movement_counts": dict(counts),
        "movement_amounts": dict(amounts),
    }


KIND_TYPES = {
    "stake": "wallet.stake_taken",
    "call_held": "wallet.call_held",
    "call_captured": "wallet.call_captured",
    "call_released": "wallet.call_released",
    "payout": "wallet.payout_credited",
    "refund": "wallet.stakes_refunded",
    "deposit": "wallet.deposited",
    "withdrawal": "wallet.withdrawn",
}


def database_figures(dsn: str) -> dict[str, Any]:
    """The same figures from the projection's tables."""
    with psycopg.connect(dsn) as conn:
        one = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE status = 'settled'),"
            " count(*) FILTER (WHERE status = 'voided'),"
            " coalesce(sum(total_bet) FILTER (WHERE status = 'settled'), 0),"
            " coalesce(sum(total_return) FILTER (WHERE status = 'settled'), 0) FROM rounds"
        ).fetchone()
        assert one is not None
        kinds = conn.execute(
            "SELECT kind, count(*), sum(amount) FROM movements GROUP BY kind"
        ).fetchall()
    return {
        "rounds": one[0],
        "settled": one[1],
        "voided": one[2],
        "stakes": int(one[3]),
        "returns": int(one[4]),
        "movements": sum(count for _, count, _ in kinds),
        "movement_counts": {KIND_TYPES[kind]: count for kind, count, _ in kinds},
        "movement_amounts": {KIND_TYPES[kind]: int(total) for kind, _, total in kinds},
    }
