"""How long a consumer's fetch may wait at the broker for records (``fetch_max_wait_ms``), chosen
from what its polls returned: short while records flow, long once none came for a while.

Why adaptive (issue 28, "idle is idle"): an idle service spent most of its work fetching every
50 ms (twice for a service that also follows the table book). The broker answers a waiting fetch
as soon as records can be handed over (a read_committed fetch too: Kafka wakes it on the
transaction's commit, ``bench/bench_fetch_wake.py``), so a long wait costs an idle consumer no
latency on its first record. But a fixed long wait costs a busy one: aiokafka's fetch-ahead
leaves partitions whose fetched records are still unread out of the next fetch, which then
waits out its whole wait for the others; at a fixed 500 ms the per-hop p50 under load doubled.
So: ``BUSY_MS`` while records flow, ``IDLE_MS`` after ``IDLE_AFTER_S`` with none, ``BUSY_MS``
again from the first poll that returns records."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

BUSY_MS = 50  # the wait while records flow (the services' wait before this module)
IDLE_MS = 500  # the wait once none came for IDLE_AFTER_S (aiokafka's and Kafka's default)
IDLE_AFTER_S = 2.0  # how long without records before the wait grows


@dataclass
class FetchWait:
    """The fetch wait for a consumer's next fetches, told the outcome of every poll."""

    busy_ms: int = BUSY_MS
    idle_ms: int = IDLE_MS
    idle_after_s: float = IDLE_AFTER_S
    clock: Callable[[], float] = time.monotonic
    _last_records: float = field(init=False)
    wait_ms: int = field(init=False)
    changes: int = field(init=False, default=0)  # how often the wait changed (a cost counter)

    def __post_init__(self) -> None:
        if not 0 < self.busy_ms <= self.idle_ms:
            raise ValueError(f"need 0 < busy_ms <= idle_ms, got {self.busy_ms}, {self.idle_ms}")
        if self.idle_after_s <= 0:
            raise ValueError(f"idle_after_s must be positive, got {self.idle_after_s}")
        self._last_records = self.clock()  # a consumer starts busy: it has a log to catch up on
        self.wait_ms = self.busy_ms

    def polled(self, records: int) -> int:
        """The wait after a poll that returned ``records`` records (the same as before unless it
        changes now: the caller applies it only then)."""
        now = self.clock()
        if records:
            self._last_records = now
            wanted = self.busy_ms
        elif now - self._last_records >= self.idle_after_s:
            wanted = self.idle_ms
        else:
            wanted = self.wait_ms
        if wanted != self.wait_ms:
            self.wait_ms = wanted
            self.changes += 1
        return wanted
