"""The adaptive fetch wait: short while records flow, long after a while without, short again on
the first records; and how the Kafka consumers apply it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aiokafka
import pytest

from holdem.runtime import kafka
from holdem.runtime.fetch_wait import BUSY_MS, IDLE_AFTER_S, IDLE_MS, FetchWait
from holdem.runtime.kafka_internals import fetch_wait, set_fetch_wait


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_defaults_are_50_ms_busy_500_ms_idle_after_2_s() -> None:
    assert (BUSY_MS, IDLE_MS, IDLE_AFTER_S) == (50, 500, 2.0)


def test_a_new_consumer_starts_busy_and_stays_busy_until_the_idle_time_has_passed() -> None:
    clock = Clock()
    wait = FetchWait(clock=clock)
    assert wait.wait_ms == 50
    clock.now += 1.999
    assert wait.polled(0) == 50
    clock.now += 0.001
    assert wait.polled(0) == 500
    assert wait.changes == 1


def test_records_keep_it_busy_and_the_idle_time_counts_from_the_last_records() -> None:
    clock = Clock()
    wait = FetchWait(clock=clock)
    for _ in range(10):
        clock.now += 1.5
        assert wait.polled(3) == 50
    clock.now += 1.5
    assert wait.polled(0) == 50  # 1.5 s since the last records
    clock.now += 0.5
    assert wait.polled(0) == 500
    assert wait.changes == 1


def test_the_first_records_after_idle_bring_the_short_wait_back_at_once() -> None:
    clock = Clock()
    wait = FetchWait(clock=clock)
    clock.now += 60
    assert wait.polled(0) == 500
    assert wait.polled(1) == 50
    assert wait.polled(0) == 50  # not idle again until another idle_after_s
    clock.now += 2
    assert wait.polled(0) == 500
    assert wait.changes == 3


def test_an_idle_consumer_changes_its_wait_once_not_at_every_poll() -> None:
    clock = Clock()
    wait = FetchWait(clock=clock)
    for _ in range(1000):
        clock.now += 0.1
        wait.polled(0)
    assert (wait.wait_ms, wait.changes) == (500, 1)


@pytest.mark.parametrize(
    ("busy_ms", "idle_ms", "idle_after_s"), [(0, 500, 2.0), (600, 500, 2.0), (50, 500, 0.0)]
)
def test_a_policy_that_makes_no_sense_is_refused(
    busy_ms: int, idle_ms: int, idle_after_s: float
) -> None:
    with pytest.raises(ValueError):
        FetchWait(busy_ms=busy_ms, idle_ms=idle_ms, idle_after_s=idle_after_s)


def fake_consumer(wait_ms: int) -> Any:
    return SimpleNamespace(_fetcher=SimpleNamespace(_fetch_max_wait_ms=wait_ms))


def test_a_changed_wait_goes_to_the_fetcher_and_an_unchanged_one_is_not_set_again() -> None:
    clock = Clock()
    wait = FetchWait(clock=clock)
    consumer = fake_consumer(50)
    sets: list[int] = []

    def counting(target: Any, wait_ms: int) -> None:
        sets.append(wait_ms)
        set_fetch_wait(target, wait_ms)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kafka, "set_fetch_wait", counting)
        kafka._adapt(consumer, wait, {})
        clock.now += 3
        for _ in range(5):
            kafka._adapt(consumer, wait, {})
        assert fetch_wait(consumer) == 500
        kafka._adapt(consumer, wait, {"tp": [object(), object()]})
        kafka._adapt(consumer, wait, {"tp": [object()]})
    assert fetch_wait(consumer) == 50
    assert sets == [500, 50]


async def test_an_unstarted_consumer_has_no_fetch_wait_to_set() -> None:
    consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers="localhost:1")  # needs a running loop
    with pytest.raises(RuntimeError, match="no started fetcher"):
        set_fetch_wait(consumer, 500)
    with pytest.raises(ValueError, match="positive"):
        set_fetch_wait(fake_consumer(50), 0)


def test_the_services_consumers_start_at_the_busy_wait() -> None:
    assert kafka.FETCH_MAX_WAIT_MS == BUSY_MS
