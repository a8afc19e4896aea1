"""Daily statements (GGR per operator, brand, currency and table), money movements, and their
CSV and JSON exports. Money is integer minor units; RTP is a ratio printed from integers."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

import psycopg

from holdem.backoffice.rows import columns

STATEMENT_SQL = """
WITH r AS (
    SELECT * FROM rounds
    WHERE operator_id = %(operator)s AND mode = 'real' AND status IN ('settled', 'voided')
      AND ended_at >= %(start)s AND ended_at < %(end)s
      AND (%(brand)s::text IS NULL OR brand = %(brand)s)
), b AS (
    SELECT b.player_id, b.round_id,
        sum(stake) FILTER (WHERE bet_type = 'ante') AS ante,
        sum(stake) FILTER (WHERE bet_type = 'call') AS call,
        sum(stake) FILTER (WHERE bet_type = 'aa_bonus') AS aa_bonus,
        sum(returned) FILTER (WHERE bet_type = 'ante') AS ante_return,
        sum(returned) FILTER (WHERE bet_type = 'call') AS call_return,
        sum(returned) FILTER (WHERE bet_type = 'aa_bonus') AS bonus_return
    FROM bets b JOIN r USING (operator_id, player_id, round_id) GROUP BY 1, 2
), f AS (
    SELECT m.player_id, m.round_id, sum(m.amount) AS refunded
    FROM movements m JOIN r USING (operator_id, player_id, round_id)
    WHERE m.kind = 'refund' GROUP BY 1, 2
)
SELECT r.operator_id, coalesce(r.brand, ''), r.currency, coalesce(r.table_id, ''),
    count(*), count(DISTINCT r.player_id),
    count(*) FILTER (WHERE r.status = 'settled'), count(*) FILTER (WHERE r.status = 'voided'),
    coalesce(sum(b.ante), 0), coalesce(sum(b.call), 0), coalesce(sum(b.aa_bonus), 0),
    coalesce(sum(b.ante_return), 0), coalesce(sum(b.call_return), 0),
    coalesce(sum(b.bonus_return), 0), coalesce(sum(f.refunded), 0)
FROM r
LEFT JOIN b USING (player_id, round_id)
LEFT JOIN f USING (player_id, round_id)
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
"""


@dataclass(frozen=True)
class StatementLine:
    """One operator, brand, currency and table on one day: settled and voided rounds."""

    day: str
    operator_id: str
    brand: str
    currency: str
    table_id: str
    rounds: int
    players: int
    settled: int
    voided: int
    ante_stakes: int
    call_stakes: int
    aa_bonus_stakes: int
    ante_returns: int
    call_returns: int
    aa_bonus_returns: int
    refunds: int

    @property
    def stakes(self) -> int:
        return self.ante_stakes + self.call_stakes + self.aa_bonus_stakes

    @property
    def returns(self) -> int:
        return self.ante_returns + self.call_returns + self.aa_bonus_returns

    @property
    def ggr(self) -> int:
        """Gross gaming revenue: what the settled rounds took minus what they returned
        (a void is refunded whole and counts for nothing)."""
        return self.stakes - self.returns

    @property
    def rtp(self) -> str:
        """Observed RTP in percent, two decimals, from integers (never a float).

        >>> StatementLine("d", "o", "", "EUR", "", 1, 1, 1, 0, 100, 200, 0, 300, 0, 0, 0).rtp
        '100.00'
        """
        if not self.stakes:
            return ""
        basis_points = (self.returns * 10_000 * 2 + self.stakes) // (2 * self.stakes)  # rounded
        return f"{basis_points // 100}.{basis_points % 100:02d}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stakes": self.stakes, "returns": self.returns,
                "ggr": self.ggr, "rtp_percent": self.rtp}  # fmt: skip


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(), tzinfo=timezone.utc)  # noqa: UP017 - reads plainer
    return start, start + timedelta(days=1)


def statement(
    conn: psycopg.Connection[Any], operator: str, day: date, brand: str | None = None
) -> list[StatementLine]:
    """The day's statement (rounds ended that UTC day, real money) of one operator."""
    start, end = day_bounds(day)
    params = {"operator": operator, "start": start, "end": end, "brand": brand}
    rows = conn.execute(STATEMENT_SQL, params).fetchall()
    # sum() of bigint is numeric in PostgreSQL: back to int, exactly
    return [StatementLine(day.isoformat(), *row[:4], *map(int, row[4:])) for row in rows]


MOVEMENT_FIELDS = columns(
    "tx_id kind player_id round_id brand table_id currency mode amount available held"
    " occurred_at event_id"
)


def movements(
    conn: psycopg.Connection[Any], operator: str, day: date | None = None,
    player: str | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Every money movement of one operator (a day's, a player's), with the round's table."""
    start, end = day_bounds(day) if day else (None, None)
    rows = conn.execute(
        "SELECT m.tx_id, m.kind, m.player_id, m.round_id, m.brand, r.table_id, m.currency,"
        " m.mode, m.amount, m.available, m.held, m.occurred_at, m.event_id FROM movements m"
        " LEFT JOIN rounds r USING (operator_id, player_id, round_id)"
        " WHERE m.operator_id = %(operator)s"
        " AND (%(start)s::timestamptz IS NULL OR m.occurred_at >= %(start)s)"
        " AND (%(end)s::timestamptz IS NULL OR m.occurred_at < %(end)s)"
        " AND (%(player)s::text IS NULL OR m.player_id = %(player)s)"
        " ORDER BY m.occurred_at, m.player_id, m.tx_id",
        {"operator": operator, "start": start, "end": end, "player": player},
    ).fetchall()
    return [dict(zip(MOVEMENT_FIELDS, row, strict=True)) for row in rows]


def to_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _plain(v) for k, v in row.items()})
    return out.getvalue()


def to_json(rows: list[dict[str, Any]]) -> str:
    return json.dumps([{k: _plain(v) for k, v in row.items()} for row in rows], indent=1)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()  # noqa: UP017
    return "" if value is None else value
