"""`holdem settle` throughput: lines/s through the harness beside plain JSON decode + encode."""

from __future__ import annotations

import json
import random
import sys
import time

from holdem.core.cards import Card
from holdem.core.harness import run


def sample_lines(count: int, seed: int = 1) -> list[bytes]:
    """Random valid rounds as JSON lines, the shape a test lab sends."""
    rng = random.Random(seed)
    lines = []
    for n in range(count):
        cards = [str(Card(code)) for code in rng.sample(range(52), 9)]
        round_ = {
            "id": n,
            "player": cards[:2],
            "dealer": cards[2:4],
            "board": cards[4:],
            "ante": rng.randrange(1, 1000),
            "aa_bonus": rng.choice((0, 5)),
            "decision": rng.choice(("call", "call", "call", "fold")),
        }
        lines.append(json.dumps(round_).encode() + b"\n")
    return lines


def rate(seconds: float, count: int) -> str:
    return f"{count / seconds:>12,.0f} lines/s"


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200_000
    lines = sample_lines(count)
    sink: list[str] = []
    started = time.perf_counter()
    for line in lines:
        sink.append(json.dumps(json.loads(line)) + "\n")
    baseline = time.perf_counter() - started
    sink.clear()
    started = time.perf_counter()
    summary = run(lines, sink.append)
    harness = time.perf_counter() - started
    assert summary.errors == 0 and summary.settled == count
    print(f"baseline json decode+encode  {rate(baseline, count)}")
    print(f"holdem settle (harness.run)  {rate(harness, count)}  ({count:,} rounds)")
