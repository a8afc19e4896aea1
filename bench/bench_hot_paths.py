"""Per-call CPU cost of what every round does on the services' hot path, each beside the bare
operation it is built on (issue 28): parse a record (contracts.parse vs json.loads; and a round's
records in turn, as the audit parses them, issue 31), serialise an event (contracts.dump vs
json.dumps of its dict), shuffle a deck (the dealer's one-read shuffle vs the secrets.randbelow
one it replaced vs random.shuffle), check and deal it, evaluate a hand, derive an id (uuid5, as
the runtime's record ids, and an event's id), update a metric (labels() per call vs a bound
child).

CPU time (process_time, robust on a busy box), best of 3; printed, never asserted.
"""

from __future__ import annotations

import itertools
import json
import random
import secrets
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from bench_replay import closed, generate, round_events
from prometheus_client import CollectorRegistry, Counter

from holdem.core.cards import FULL_DECK
from holdem.core.contracts import dump, parse
from holdem.core.decider import Context
from holdem.core.deck import deal, ensure_full_deck, shuffle
from holdem.core.evaluator import evaluate
from holdem.harness.audit_log import Record

Row = tuple[str, Callable[[], object], int]


def per_call_us(run: Callable[[], object], count: int, repeat: int = 3) -> float:
    """Best CPU microseconds per call of ``run`` over ``repeat`` runs of ``count`` calls."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for _ in range(count):
            run()
        best = min(best, time.process_time() - started)
    return 1e6 * best / count


def groups(scale: float) -> list[tuple[str, list[Row]]]:
    dealt = round_events("bench-p1", "bench-p1-r000001")[2]
    raw = dump(dealt)
    closed_v2 = closed("bench-p1", "bench-p1-r000001", 1500, "call")
    closed_v1 = dump(closed_v2)  # written at v1
    closed_v2_raw = closed_v2.model_dump_json().encode()  # as the next release writes it
    body = json.loads(raw)
    registry = CollectorRegistry()
    published = Counter("bench_published", "published", ["service", "type"], registry=registry)
    child = published.labels("dealer", "round.dealt")
    namespace, seed = uuid.UUID(int=28), "holdem.rounds/1/123456"
    hand = list(FULL_DECK[:7])
    deck = list(FULL_DECK)
    shuffled = shuffle()
    ctx = Context(datetime(2026, 1, 1, tzinfo=UTC), cause_id="c", seed=seed)
    n = max(1, int(scale * 20_000))
    # A round's records as a round writes them (bet, deal, decision, settlement, the wallet's
    # moves, round.closed at v1, the sealed deck), after the players' deposits.
    mix = [(role, dump(event)) for role, event in generate(24, 4)][4:]
    mixes = [itertools.cycle(mix), itertools.cycle(mix)]
    mixes.append(itertools.cycle([(role, 0, 0, raw) for role, raw in mix]))
    return [
        (
            "parse a Dealt record",
            [
                ("json.loads (baseline)", lambda: json.loads(raw), n),
                ("contracts.parse('rounds', raw)", lambda: parse("rounds", raw), n),
                ("the same of a v1 round.closed (upcast)", lambda: parse("rounds", closed_v1), n),
                ("the same of a v2 round.closed", lambda: parse("rounds", closed_v2_raw), n),
            ],
        ),
        (
            "parse a round's records in turn, per record (the audit's mix, issue 31)",
            [
                ("json.loads (baseline)", lambda: json.loads(next(mixes[0])[1]), n),
                ("contracts.parse(role, raw)", lambda: parse(*next(mixes[1])), n),
                ("the audit's Record.of (upcast, parse)", lambda: Record.of(*next(mixes[2])), n),
            ],
        ),
        (
            "serialise a Dealt event",
            [
                ("json.dumps of its dict (baseline)", lambda: json.dumps(body).encode(), n),
                ("contracts.dump(event)", lambda: dump(dealt), n),
            ],
        ),
        (
            "shuffle 52 cards",
            [
                ("random.shuffle, Mersenne (baseline)", lambda: random.shuffle(deck), n // 10),
                ("shuffle(), one os.urandom read", shuffle, n // 10),
                (
                    "shuffle(randbelow=secrets.randbelow)",
                    lambda: shuffle(FULL_DECK, secrets.randbelow),
                    n // 10,
                ),
            ],
        ),
        (
            "check and deal a shuffled deck",
            [
                ("ensure_full_deck(deck)", lambda: ensure_full_deck(shuffled), n),
                ("deal(deck)", lambda: deal(shuffled), n),
            ],
        ),
        ("evaluate 7 cards", [("holdem.core.evaluator.evaluate", lambda: evaluate(hand), n)]),
        (
            "an id per record",
            [
                ("uuid4 (baseline)", uuid.uuid4, n),
                ("uuid5(namespace, seed)", lambda: uuid.uuid5(namespace, seed), n),
                ("Context.next_id(), an event's id", ctx.next_id, n),
            ],
        ),
        (
            "count a published event",
            [
                ("bound child .inc() (baseline)", child.inc, n),
                (
                    "Counter.labels(service, type).inc()",
                    lambda: published.labels("dealer", "round.dealt").inc(),
                    n,
                ),
            ],
        ),
    ]


def main(scale: float) -> None:
    for title, rows in groups(scale):
        print(f"{title}:", flush=True)
        baseline = None
        for name, run, count in rows:
            cost = per_call_us(run, count)
            baseline = baseline or cost
            print(f"  {name:40} {cost:9.2f} us/call  x{cost / baseline:5.1f}", flush=True)


if __name__ == "__main__":
    scale = (
        float(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].replace(".", "").isdigit() else 1.0
    )
    main(scale)
