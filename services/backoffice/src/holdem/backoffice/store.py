"""Writing a batch and its consumer positions in one PostgreSQL transaction (the "tracking"
pattern of the eventsourcing library): either both are in the database or neither is."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import psycopg
from psycopg import sql

from holdem.backoffice.rows import (
    BET_COLUMNS,
    MOVEMENT_COLUMNS,
    ROUND_COLUMNS,
    SESSION_COLUMNS,
    Batch,
)

INSERTS = {
    "malfunctions": 8,
    "voids": 6,
    "bet_rejections": 8,
    "table_versions": 6,
    "seamless_replies": 7,
}


class PositionConflictError(RuntimeError):
    """The stored positions moved under us: another projection writes the same topics."""


def positions(conn: psycopg.Connection[Any], topics: list[str]) -> dict[tuple[str, int], int]:
    """The next offset to read per (topic, partition), as the last committed batch left it."""
    rows = conn.execute(
        "SELECT topic, partition, next_offset FROM tracking WHERE topic = ANY(%s)", (topics,)
    ).fetchall()
    return {(topic, partition): offset for topic, partition, offset in rows}


def insert_sql(table: str, columns: list[str], conflict: str = "") -> sql.Composed:
    return sql.SQL("INSERT INTO {} ({}) VALUES ({}) {}").format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
        sql.SQL(conflict),
    )


def write(
    conn: psycopg.Connection[Any], batch: Batch, expected: dict[tuple[str, int], int]
) -> None:
    """The batch's rows and its positions, in one transaction. ``expected``: the positions this
    process last stored; a row that says otherwise means a second writer, and nothing is written."""
    with conn.transaction(), conn.cursor() as cur:
        _check_positions(cur, batch, expected)
        _write_rows(cur, batch)
        cur.executemany(
            "INSERT INTO tracking (topic, partition, next_offset) VALUES (%s, %s, %s)"
            " ON CONFLICT (topic, partition) DO UPDATE"
            " SET next_offset = excluded.next_offset, updated_at = now()",
            [(topic, partition, offset) for (topic, partition), offset in batch.positions.items()],
        )


def _check_positions(
    cur: psycopg.Cursor[Any], batch: Batch, expected: dict[tuple[str, int], int]
) -> None:
    topics = sorted({topic for topic, _ in batch.positions})
    cur.execute(
        "SELECT topic, partition, next_offset FROM tracking WHERE topic = ANY(%s) FOR UPDATE",
        (topics,),
    )
    stored = {(t, p): o for t, p, o in cur.fetchall()}
    for tp in batch.positions:
        if stored.get(tp, 0) != expected.get(tp, 0):
            raise PositionConflictError(
                f"{tp[0]}[{tp[1]}] is at {stored.get(tp)} in the database, this process read"
                f" from {expected.get(tp, 0)}: another projection is writing these topics"
            )


def _write_rows(cur: psycopg.Cursor[Any], batch: Batch) -> None:
    if batch.new_rounds:
        cur.executemany(
            insert_sql("rounds", ROUND_COLUMNS),
            [tuple(row[c] for c in ROUND_COLUMNS) for row in batch.new_rounds.values()],
        )
    by_columns: dict[tuple[str, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for (operator, player, round_id), values in batch.round_updates.items():
        columns = tuple(sorted(values))
        by_columns[columns].append((*(values[c] for c in columns), operator, player, round_id))
    for columns, params in by_columns.items():
        query = sql.SQL(
            "UPDATE rounds SET {} WHERE operator_id = %s AND player_id = %s AND round_id = %s"
        ).format(sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in columns))
        cur.executemany(query, params)
    if batch.dropped_bets:
        cur.executemany(
            "DELETE FROM bets WHERE operator_id = %s AND player_id = %s AND round_id = %s",
            sorted(batch.dropped_bets),
        )
    if batch.bets:
        cur.executemany(insert_sql("bets", BET_COLUMNS), list(batch.bets.values()))
    if batch.movements:
        cur.executemany(insert_sql("movements", MOVEMENT_COLUMNS), batch.movements)
    if batch.new_sessions:
        cur.executemany(
            insert_sql("sessions", SESSION_COLUMNS),
            [tuple(row[c] for c in SESSION_COLUMNS) for row in batch.new_sessions.values()],
        )
    if batch.session_ends:
        cur.executemany(
            "UPDATE sessions SET ended_at = %s, end_reason = %s"
            " WHERE operator_id = %s AND player_id = %s AND session_id = %s",
            [(*end, *key) for key, end in batch.session_ends.items()],
        )
    for table, width in INSERTS.items():
        if batch.inserts.get(table):
            cur.executemany(_insert_n(table, width), batch.inserts[table])
    _write_seamless(cur, batch)


def _insert_n(table: str, width: int) -> sql.Composed:
    return sql.SQL("INSERT INTO {} VALUES ({})").format(
        sql.Identifier(table), sql.SQL(", ").join(sql.Placeholder() * width)
    )


def _write_seamless(cur: psycopg.Cursor[Any], batch: Batch) -> None:
    if batch.inserts.get("seamless"):
        # A request sent again (same tx_id, until answered) is one transaction, sent n times.
        cur.executemany(
            "INSERT INTO seamless (operator_id, player_id, tx_id, kind, round_id, currency,"
            " amount, requested_at, sends) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1)"
            " ON CONFLICT (operator_id, player_id, tx_id) DO UPDATE SET sends = seamless.sends + 1",
            batch.inserts["seamless"],
        )
