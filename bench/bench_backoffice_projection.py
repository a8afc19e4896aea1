"""The back office's projection: records parsed, batched and written with their positions (one
transaction per batch of 2,000 records), beside a bare INSERT of the same final rows in
the same batch sizes, on one throwaway PostgreSQL cluster (fsync on) in the same run.

The records are synthetic (holdem.backoffice.synthetic: real decks and settlements) and are
fed from memory as the consumer would hand them over: Kafka's fetch is not in either figure.
uv run --frozen python bench/bench_backoffice_projection.py [--rounds N]"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holdem.backoffice import db, store
from holdem.backoffice.localdb import postgres_cluster
from holdem.backoffice.project import Projection
from holdem.backoffice.settings import BackofficeSettings
from holdem.backoffice.synthetic import rounds
from holdem.core.contracts import dump
from holdem.core.wire.connection import KafkaConnection

OUT = Path(__file__).parent / "results" / "backoffice-projection.json"
BATCH = 2_000
TABLES = ("rounds", "bets", "movements", "voids")


@dataclass(frozen=True)
class Fetched:
    """What aiokafka's ConsumerRecord gives the projection (the fields it reads)."""

    topic: str
    partition: int
    offset: int
    value: bytes
    headers: tuple[tuple[str, bytes], ...]


def records(count: int) -> list[Fetched]:
    offsets: dict[str, int] = {}
    out = []
    for role, message in rounds(count, players=300):
        topic = f"holdem.{role}"
        offset = offsets.get(topic, 0)
        offsets[topic] = offset + 1
        headers = (("type", message.type.encode()), ("operator", b"op-1"), ("brand", b"b1"))
        out.append(Fetched(topic, 0, offset, dump(message), headers))
    return out


def project(dsn: str, fetched: list[Fetched]) -> tuple[float, int]:
    settings = BackofficeSettings(dsn=dsn, operator_id="op-1")
    projection = Projection(settings, KafkaConnection("127.0.0.1:1"))
    touched = 0
    with db.connect(dsn) as conn:
        started = time.perf_counter()
        for start in range(0, len(fetched), BATCH):
            batch = projection.batch_of(fetched[start : start + BATCH])  # type: ignore[arg-type]
            store.write(conn, batch, projection.positions)
            projection.positions.update(batch.positions)
            touched += batch.rows
        return time.perf_counter() - started, touched


def bare(source: str, target: str, how: str) -> tuple[float, int]:
    """The projection's final rows, read back, inserted plainly in batches of BATCH rows, one
    transaction each: ``insert`` (executemany, pipelined) or ``copy`` (COPY FROM STDIN)."""
    rows: list[tuple[str, str, list[tuple[Any, ...]]]] = []
    with db.connect(source) as conn:
        for table in TABLES:
            cur = conn.execute(f"SELECT * FROM {table}")
            columns = ", ".join(d.name for d in cur.description or ())
            rows.append((table, columns, cur.fetchall()))
    total = sum(len(found) for *_, found in rows)
    with db.connect(target) as conn:
        started = time.perf_counter()
        for table, columns, found in rows:
            marks = ", ".join(["%s"] * len(columns.split(", ")))
            for start in range(0, len(found), BATCH):
                chunk = found[start : start + BATCH]
                with conn.transaction(), conn.cursor() as cur:
                    if how == "copy":
                        store.copy(cur, table, columns.split(", "), chunk)
                    else:
                        cur.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", chunk)
        return time.perf_counter() - started, total


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20_000)
    args = parser.parse_args(argv)
    fetched = records(args.rounds)
    with postgres_cluster(durable=True) as pg:
        projected, inserted, copied = (pg.create_database(n) for n in ("projected", "ins", "cp"))
        for dsn in (projected, inserted, copied):
            db.upgrade(dsn)
        seconds, touched = project(projected, fetched)
        with db.connect(projected) as conn:
            final = sum(
                conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
                for t in TABLES
            )
        bare_seconds, bare_rows = bare(projected, inserted, "insert")
        copy_seconds, _ = bare(projected, copied, "copy")
    result = {
        "rounds": args.rounds, "records": len(fetched), "batch_records": BATCH,
        "projection_seconds": round(seconds, 2), "rows_written": final,
        "row_operations": touched,
        "projection_records_per_s": round(len(fetched) / seconds),
        "projection_rows_per_s": round(final / seconds),
        "bare_insert_seconds": round(bare_seconds, 2), "bare_rows": bare_rows,
        "bare_rows_per_s": round(bare_rows / bare_seconds),
        "bare_copy_seconds": round(copy_seconds, 2),
        "bare_copy_rows_per_s": round(bare_rows / copy_seconds),
        "ratio_to_insert": round((final / seconds) / (bare_rows / bare_seconds), 2),
        "ratio_to_copy": round((final / seconds) / (bare_rows / copy_seconds), 2),
    }  # fmt: skip
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"projection: {result['projection_records_per_s']} records/s, "
        f"{result['projection_rows_per_s']} rows/s ({final} rows from {len(fetched)} records); "
        f"the same rows bare: INSERT {result['bare_rows_per_s']} rows/s (ratio "
        f"{result['ratio_to_insert']}), COPY {result['bare_copy_rows_per_s']} rows/s (ratio "
        f"{result['ratio_to_copy']})  -> {OUT}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
