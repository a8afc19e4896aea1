"""The loop's periodic watches: the tick's ask whether the member has read its partitions to
their ends (``caught_up``), the stall watch (``watch``, issue 26) and the lag gauge."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import structlog

from holdem.runtime.member import GroupMember
from holdem.runtime.wiring import Wiring

log = structlog.get_logger(__name__)
CAUGHT_UP_TIMEOUT_S = 5.0  # a tick's ask for the log's ends: longer, and the broker is stalled
# Bounded with asyncio.timeout, never asyncio.wait_for: on Python 3.11 wait_for returns the
# answer and drops a cancel that lands in the turn the answer arrives (CPython gh-86296, fixed in
# 3.12), so a stop's cancel of the tick or the stall watch was lost and the stop hung for ever.
# Liveness (issue 26): a member serving its partitions with records waiting on them, and the
# broker answering, that decides no batch for this long is stalled (its committed offsets never
# answered, say): it exits for its supervisor rather than stay up doing nothing. Above any
# batch's retries and a rebalance's wait for a member's session; within the 90 s goal.
STALL_S = 45.0
# A watch that runs this much later than its period plus its ask did not run: the event loop was
# blocked (a long computation in the process, a machine that gave it no CPU), which is not a
# stalled member. It restarts its clock instead of judging a stall on time it did not watch.
LATE_S = 15.0
LAG_PERIOD_S = 5.0  # how often the lag gauge is measured
# The lag gauge's turn this much later than its period: the event loop was held that long (a
# batch, a snapshot, a machine that gave the process no CPU). Logged, since the group's session
# is 6 s: a loop held that long gets the member evicted.
HELD_S = 2.0


class StalledError(RuntimeError):
    """Records wait on assigned partitions and none has been decided for ``STALL_S``."""


class Watches:
    def __init__(self, wiring: Wiring, group: GroupMember, group_id: str) -> None:
        self.wiring = wiring
        self.group = group
        self.group_id = group_id
        self.stall_s = STALL_S
        self._ran_at: float | None = None  # when the watch last ran
        self._measured_at: float | None = None  # when the lag gauge was last measured

    @property
    def period_s(self) -> float:
        """How often the app runs the stall watch."""
        return min(5.0, self.stall_s / 4)

    def _late(self, since: float, expected_s: float) -> bool:
        late_s = time.monotonic() - since - expected_s
        if late_s <= LATE_S:
            return False
        log.warning("stall watch ran late: its clock restarts", late_s=round(late_s, 1))
        self.group.progress_at = time.monotonic()
        return True

    async def caught_up(self) -> bool:
        """Every assigned partition read to its end, as the broker says now: ticks judge
        timeouts only then. A broker it cannot ask is a stall; the first answer after one is a
        resumption (``resumed_at``)."""
        group, consumer = self.group, self.group.consumer
        if consumer is None or not group.ready or not group.member() or not consumer.assignment():
            return False
        assigned = sorted(consumer.assignment())
        try:
            async with asyncio.timeout(CAUGHT_UP_TIMEOUT_S):  # not wait_for (CAUGHT_UP_TIMEOUT_S)
                ends = await consumer.end_offsets(assigned)
        except Exception as error:  # whatever kept the broker from answering: a stall
            self._cut_off(error)
            return False
        if group.unreachable:
            group.unreachable = False
            group.resumed_at = datetime.now(UTC)
            log.info("broker answering again: timers count from now")
        for tp in assigned:
            position = consumer.known_position(tp)  # position() would wait while it has none
            if position is None or position < ends[tp]:
                return False
        return True

    def _cut_off(self, error: BaseException) -> None:
        """The broker did not answer an ask for the log's ends: unready (``healthy``) until a
        tick's ask is answered again (only ``caught_up`` clears it, so ``resumed_at`` keeps its
        meaning)."""
        if not self.group.unreachable:
            log.warning("broker not answering: unready, timers wait", error=repr(error))
        self.group.unreachable = True

    async def watch(self) -> None:
        """Liveness: a member serving its partitions (rebuilt, still the member), with records
        waiting on them (or no position to read them from: its committed offsets never
        answered) and a broker that answers, that has decided no batch for ``stall_s`` is
        stalled: it says so and ends (status 70) for its supervisor, whose restart starts it
        over (a new producer epoch ends what its transactional id left open). A rebuild has its
        own bounds; a broker that does not answer is an outage, not this instance's stall."""
        group, consumer = self.group, self.group.consumer
        now, ran_at, self._ran_at = time.monotonic(), self._ran_at, time.monotonic()
        if consumer is None or not group.ready or group.pending is not None or not group.member():
            group.progress_at = now
            return
        if ran_at is not None and self._late(ran_at, self.period_s + CAUGHT_UP_TIMEOUT_S):
            return
        assigned = sorted(consumer.assignment())
        try:
            async with asyncio.timeout(CAUGHT_UP_TIMEOUT_S):  # not wait_for (CAUGHT_UP_TIMEOUT_S)
                ends = await consumer.end_offsets(assigned)
        except Exception as error:  # the broker away: the clock starts again after
            # The tick may be the one that cannot ask: it waits on the processor's lock while a
            # commit hangs with the broker gone (aiokafka's commit_transaction has no timeout).
            # This watch takes no lock, so it is what tells the health check (issue 26).
            self._cut_off(error)
            group.progress_at = time.monotonic()
            return
        if self._late(now, CAUGHT_UP_TIMEOUT_S):  # the ask itself came back late
            return
        waiting = {}
        for tp in assigned:
            position = consumer.known_position(tp)
            if position is None or position < ends[tp]:
                waiting[f"{tp.topic}-{tp.partition}"] = (position, ends[tp])
        if not waiting:  # idle, not stalled
            group.progress_at = time.monotonic()
            return
        stalled_s = time.monotonic() - group.progress_at
        if stalled_s < self.stall_s:
            return
        log.critical(
            "stalled: records waiting and nothing decided, exiting for a restart",
            group=self.group_id,
            seconds=round(stalled_s, 1),
            waiting={tp: {"position": p, "end": end} for tp, (p, end) in sorted(waiting.items())},
        )
        self.wiring.fatal(
            StalledError(f"nothing decided for {stalled_s:.0f}s with records waiting: {waiting}")
        )

    async def measure_lag(self) -> None:
        now, measured_at, self._measured_at = time.monotonic(), self._measured_at, time.monotonic()
        if measured_at is not None and now - measured_at - LAG_PERIOD_S > HELD_S:
            log.warning("event loop held", held_s=round(now - measured_at - LAG_PERIOD_S, 1))
        consumer = self.group.consumer
        if consumer is None:
            return
        name = self.wiring.name
        for tp in consumer.assignment():
            high, position = consumer.highwater(tp), consumer.known_position(tp)
            if high is not None and position is not None:
                behind = max(high - position, 0)
                self.wiring.metrics.lag.labels(name, tp.topic, str(tp.partition)).set(behind)
