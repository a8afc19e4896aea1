"""`holdem settle` throughput (CPU time, robust on a busy box) beside plain JSON decode + encode."""

from __future__ import annotations

import io
import json
import random
import sys
import time

from holdem.core.cards import Card
from holdem.core.forced_rounds import run


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
    sink = io.StringIO()  # not a list: 10^5 kept strings would time the garbage collector
    started = time.process_time()
    for line in lines:
        sink.write(json.dumps(json.loads(line)) + "\n")
    baseline = time.process_time() - started
    sink = io.StringIO()
    started = time.process_time()
    summary = run(lines, sink.write)
    harness = time.process_time() - started
    assert summary.errors == 0 and summary.settled == count
    print(f"baseline json decode+encode  {rate(baseline, count)}")
    print(f"holdem settle (harness.run)  {rate(harness, count)}  ({count:,} rounds)")
