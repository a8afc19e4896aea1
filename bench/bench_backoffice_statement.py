"""A day's statement with free hands and promotional credits in play: its time against a
baseline query over the same rounds (a plain sum of the day's settled rounds), both in this
process on a throwaway PostgreSQL cluster, so the ratio says what the statement's per-round
money (whose stake, what was paid) costs, whatever the machine.

The rounds are synthetic (real decks, settlements and wallet movements) written through the
projection's own write path: one day of ``--rounds`` rounds, every third a free hand, beside
another operator's as many rounds. uv run --frozen python bench/bench_backoffice_statement.py"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import date
from pathlib import Path

from holdem.backoffice import db, reports
from holdem.backoffice.localdb import postgres_cluster

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.bo_web import fill

DAY = date(2026, 11, 30)
BASELINE = (
    "SELECT count(*), sum(total_bet), sum(total_return) FROM rounds WHERE operator_id = %s"
    " AND mode = 'real' AND status = 'settled' AND ended_at >= %s AND ended_at < %s"
)


def median_s(run: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    with postgres_cluster() as pg:
        dsn = pg.create_database("statement")
        db.upgrade(dsn)
        fill(dsn, "op-1", args.rounds, players=200, free_every=3, credits=500)
        fill(dsn, "op-2", args.rounds, players=200, seed=2)
        with db.connect(dsn) as conn:
            conn.execute("ANALYZE")
            start, end = reports.day_bounds(DAY)
            lines = reports.statement(conn, "op-1", DAY)
            statement = median_s(lambda: reports.statement(conn, "op-1", DAY), args.repeat)
            baseline = median_s(
                lambda: conn.execute(BASELINE, ("op-1", start, end)).fetchall(), args.repeat
            )
    rounds = sum(line.rounds for line in lines)
    print(
        f"statement of {rounds} rounds ({sum(line.free_hands for line in lines)} free hands):"
        f" {1000 * statement:.0f} ms; baseline sum over the same rounds {1000 * baseline:.0f} ms;"
        f" ratio {statement / baseline:.1f}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
