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

INSERTS = (
    "malfunctions", "voids", "bet_rejections", "table_versions", "seamless_replies",
    "player_events",
)  # fmt: skip


class PositionConflictError(RuntimeError):
    """The stored positions moved under us: another projection writes the same topics."""


def positions(conn: psycopg.Connection[Any], topics: list[str]) -> dict[tuple[str, int], int]:
    """The next offset to read per (topic, partition), as the last committed batch left it."""
    rows = conn.execute(
        "SELECT topic, partition, next_offset FROM tracking WHERE topic = ANY(%s)", (topics,)
    ).fetchall()
    return {(topic, partition): offset for topic, partition, offset in rows}


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
        copy(cur, "rounds", ROUND_COLUMNS, _rows(ROUND_COLUMNS, batch.new_rounds))
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
        copy(cur, "bets", BET_COLUMNS, list(batch.bets.values()))
    if batch.movements:
        copy(cur, "movements", MOVEMENT_COLUMNS, batch.movements)
    if batch.new_sessions:
        copy(cur, "sessions", SESSION_COLUMNS, _rows(SESSION_COLUMNS, batch.new_sessions))
    if batch.session_ends:
        cur.executemany(
            "UPDATE sessions SET ended_at = %s, end_reason = %s"
            " WHERE operator_id = %s AND player_id = %s AND session_id = %s",
            [(*end, *key) for key, end in batch.session_ends.items()],
        )
    for table in INSERTS:
        if batch.inserts.get(table):
            copy(cur, table, None, batch.inserts[table])
    _write_seamless(cur, batch)


def _rows(columns: list[str], found: dict[Any, dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(row[c] for c in columns) for row in found.values()]


def copy(
    cur: psycopg.Cursor[Any], table: str, columns: list[str] | None, rows: list[tuple[Any, ...]]
) -> None:
    """Rows that are new by construction (the positions say they were never written) go in by
    COPY: several times faster than INSERT for the same rows, and as transactional."""
    names = (
        sql.SQL("")
        if columns is None
        else sql.SQL("({})").format(sql.SQL(", ").join(map(sql.Identifier, columns)))
    )
    with cur.copy(sql.SQL("COPY {} {} FROM STDIN").format(sql.Identifier(table), names)) as out:
        for row in rows:
            out.write_row(row)


def _write_seamless(cur: psycopg.Cursor[Any], batch: Batch) -> None:
    if batch.inserts.get("seamless"):
        # A request sent again (same tx_id, until answered) is one transaction, sent n times.
        cur.executemany(
            "INSERT INTO seamless (operator_id, player_id, tx_id, kind, round_id, currency,"
            " amount, requested_at, sends) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1)"
            " ON CONFLICT (operator_id, player_id, tx_id) DO UPDATE SET sends = seamless.sends + 1",
            batch.inserts["seamless"],
        )
