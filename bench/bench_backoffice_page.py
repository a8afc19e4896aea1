"""A round page's response time with a million rounds loaded: p50/p95/p99 of the round page
(HTML, with the commitment verified on each request) and of a player search, through
`holdem-backoffice serve` in its own process, on a throwaway PostgreSQL cluster.

The million rounds are synthetic rows inserted directly with SQL (generate_series), each
copying the deck, cards, salt and commitment of one real round written by the projection:
3 bets and 4 movements per round, 10,000 players over a year. The page reads them as it
reads projected rounds. uv run --frozen python bench/bench_backoffice_page.py [--rounds N]"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import requests

from holdem.backoffice import db
from holdem.backoffice.auth import add_user
from holdem.backoffice.localdb import free_port, postgres_cluster

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.bo_web import fill

OUT = Path(__file__).parent / "results" / "backoffice-page.json"
PLAYERS = 10_000
LOAD = """
INSERT INTO rounds
SELECT 'op-1', 'bp' || (n % {players}), 'br' || n, 'b1', 'settled', 'EUR', 'real', NULL, NULL,
    'standard-1', NULL, NULL, NULL, 'bc' || n, t.ante, t.aa_bonus, t.call_hold, t.ante, t.aa_bonus,
    false, timestamptz '2025-12-01' + n * interval '31 seconds',
    timestamptz '2025-12-01' + n * interval '31 seconds' + interval '1 second',
    timestamptz '2025-12-01' + n * interval '31 seconds' + interval '3 seconds',
    timestamptz '2025-12-01' + n * interval '31 seconds' + interval '4 seconds',
    t.player_cards, t.flop, t.turn, t.river, t.dealer_cards, t.commitment, t.deck, t.salt,
    t.decision, false, 'bs' || n, t.result, t.dealer_qualifies, t.player_category,
    t.dealer_category, t.bonus_category, t.call_amount, t.total_bet, t.total_return, NULL
FROM generate_series(1, {rounds}) AS n, (SELECT * FROM rounds WHERE status = 'settled'
    AND decision = 'call' LIMIT 1) AS t;
INSERT INTO bets SELECT r.operator_id, r.player_id, r.round_id, b.bet_type, b.stake, b.returned,
    false FROM rounds r JOIN bets b ON b.round_id = {template} WHERE r.round_id LIKE 'br%';
INSERT INTO movements SELECT r.operator_id, r.player_id, m.kind || ':' || r.round_id, m.kind,
    'e-' || m.kind || r.round_id, r.round_id, 'b1', 'EUR', 'real', m.amount, m.available, m.held,
    r.bet_at + (m.occurred_at - t.bet_at), 'bench'
FROM rounds r, movements m, (SELECT bet_at FROM rounds WHERE round_id = {template}) AS t
WHERE m.round_id = {template} AND r.round_id LIKE 'br%';
ANALYZE;
"""


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(share: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99), "n": len(values)}


def measure(session: requests.Session, urls: list[str]) -> dict[str, float]:
    times = []
    for url in urls:
        started = time.perf_counter()
        answer = session.get(url)
        times.append(time.perf_counter() - started)
        assert answer.ok, (url, answer.status_code)
    return percentiles(times)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args(argv)
    with postgres_cluster() as pg:
        dsn = pg.create_database("page")
        db.upgrade(dsn)
        fill(dsn, "op-1", 50)
        with db.connect(dsn) as conn:
            row = conn.execute(
                "SELECT round_id FROM rounds WHERE status = 'settled' AND decision = 'call' LIMIT 1"
            ).fetchone()
            assert row is not None
            started = time.perf_counter()
            conn.execute(LOAD.format(rounds=args.rounds, players=PLAYERS, template=f"'{row[0]}'"))  # type: ignore[arg-type]
            load_s = time.perf_counter() - started
            total = conn.execute("SELECT count(*) FROM rounds").fetchone()
            add_user(conn, "bench", "bench-password", "regulator", "op-1")
        print(f"loaded {total} rounds in {load_s:.0f}s", flush=True)
        port = free_port()
        env = {**os.environ, "HOLDEM_BACKOFFICE_DSN": dsn, "HOLDEM_BACKOFFICE_PORT": str(port)}
        server = subprocess.Popen(
            [sys.executable, "-m", "holdem.backoffice.cli", "serve"], env=env,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert server.stdout is not None and "http://" in server.stdout.readline()
            url = f"http://127.0.0.1:{port}"
            session = requests.Session()
            for _ in range(100):
                try:
                    session.post(
                        f"{url}/login", data={"username": "bench", "password": "bench-password"}
                    )
                    break
                except requests.ConnectionError:
                    time.sleep(0.1)
            rng = random.Random(7)
            picks = [rng.randrange(1, args.rounds + 1) for _ in range(args.requests)]
            rounds = [f"{url}/rounds/bp{n % PLAYERS}/br{n}" for n in picks]
            measure(session, rounds[:20])  # warm-up: connections, templates
            page = measure(session, rounds)
            search = measure(session, [f"{url}/rounds?player=bp{n % PLAYERS}" for n in picks[:100]])
        finally:
            server.terminate()
            server.wait(10)
    result = {"rounds": total[0] if total else 0, "load_seconds": round(load_s),
              "round_page": page, "player_search": search}  # fmt: skip
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"round page with {result['rounds']} rounds: {page}; player search: {search} -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
