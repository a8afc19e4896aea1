"""Simulator throughput per strategy, beside the bare CSPRNG shuffle and deal it is built on."""

from __future__ import annotations

import time

from holdem.core.cards import FULL_DECK
from holdem.core.deck import deal, shuffle
from holdem.core.strategy import STRATEGIES
from holdem.math.sim import simulate

ROUNDS = 20_000


def shuffle_rate(rounds: int) -> float:
    start = time.process_time()
    for _ in range(rounds):
        deal(shuffle(FULL_DECK))
    return rounds / (time.process_time() - start)


if __name__ == "__main__":
    baseline = shuffle_rate(ROUNDS)
    print(f"  shuffle + deal only (secrets)      {baseline:10,.0f} rounds/s CPU")
    for name in ("always-call", "basic", "optimal"):
        STRATEGIES[name](FULL_DECK[:2], FULL_DECK[2:5])  # load the optimal table first
        start, wall = time.process_time(), time.perf_counter()
        simulate(ROUNDS, STRATEGIES[name])
        cpu, wall = time.process_time() - start, time.perf_counter() - wall
        rate = ROUNDS / cpu
        print(
            f"  holdem sim --strategy {name:12} {rate:10,.0f} rounds/s CPU "
            f"({ROUNDS / wall:,.0f} wall, {rate / baseline:.0%} of the bare shuffle)"
        )
