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
WITH r AS MATERIALIZED (
    SELECT operator_id, player_id, round_id, brand, currency, table_id, status FROM rounds
    WHERE operator_id = %(operator)s AND mode = 'real' AND status IN ('settled', 'voided')
      AND ended_at >= %(start)s AND ended_at < %(end)s
      AND (%(brand)s::text IS NULL OR brand = %(brand)s)
), g AS (  -- one row per round, each figure an index lookup (never a join of aggregates)
    SELECT r.operator_id, coalesce(r.brand, '') AS brand, r.currency,
        coalesce(r.table_id, '') AS table_id, r.player_id, r.status, m.free_hand,
        b.ante, b.call, b.aa_bonus,
        CASE WHEN r.status = 'settled' THEN m.cash_stake ELSE 0 END AS cash_stake,
        CASE WHEN r.status = 'settled' THEN m.promo_stake ELSE 0 END AS promo_stake,
        CASE WHEN r.status = 'settled' THEN coalesce(m.cash_paid, 0) ELSE 0 END AS cash_paid,
        coalesce(f.refunded, 0) AS refunded, 0 AS promo_credit
    FROM r
    CROSS JOIN LATERAL (
        SELECT * FROM round_money x WHERE x.operator_id = r.operator_id
          AND x.player_id = r.player_id AND x.round_id = r.round_id
    ) m
    CROSS JOIN LATERAL (
        SELECT sum(stake) FILTER (WHERE bet_type = 'ante') AS ante,
            sum(stake) FILTER (WHERE bet_type = 'call') AS call,
            sum(stake) FILTER (WHERE bet_type = 'aa_bonus') AS aa_bonus
        FROM bets WHERE bets.operator_id = r.operator_id AND bets.player_id = r.player_id
          AND bets.round_id = r.round_id
    ) b
    CROSS JOIN LATERAL (
        SELECT sum(amount) AS refunded FROM movements v WHERE v.operator_id = r.operator_id
          AND v.player_id = r.player_id AND v.round_id = r.round_id AND v.kind = 'refund'
    ) f
    UNION ALL  -- promotional credits, paid outside any round: the line without a table
    SELECT operator_id, coalesce(brand, ''), currency, '', player_id, NULL, false,
        NULL, NULL, NULL, 0, 0, 0, 0, amount
    FROM movements
    WHERE operator_id = %(operator)s AND kind = 'promo_credit' AND mode = 'real'
      AND occurred_at >= %(start)s AND occurred_at < %(end)s
      AND (%(brand)s::text IS NULL OR brand = %(brand)s)
)
SELECT operator_id, brand, currency, table_id,
    count(*) FILTER (WHERE status IS NOT NULL),
    count(DISTINCT player_id) FILTER (WHERE status IS NOT NULL),
    count(*) FILTER (WHERE status = 'settled'), count(*) FILTER (WHERE status = 'voided'),
    count(*) FILTER (WHERE status = 'settled' AND free_hand),
    coalesce(sum(ante), 0), coalesce(sum(call), 0), coalesce(sum(aa_bonus), 0),
    sum(cash_stake), sum(promo_stake), sum(cash_paid), sum(refunded), sum(promo_credit)
FROM g GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
"""


@dataclass(frozen=True)
class StatementLine:
    """One operator, brand, currency and table on one day: settled and voided rounds (by the
    UTC day they ended), and on the line without a table the day's promotional credits.

    Whose money (issue 29, ADR 029): ``cash_stakes`` the players' own money staked in settled
    rounds, ``promo_stakes`` what promotions staked for them (free hands' ante and bonus),
    ``cash_paid`` what settled rounds paid the players, ``refunds`` what voids gave back,
    ``promo_credits`` promotional credits paid outside rounds. Bet columns are what was wagered
    on each bet, whoever paid it."""

    day: str
    operator_id: str
    brand: str
    currency: str
    table_id: str
    rounds: int
    players: int
    settled: int
    voided: int
    free_hands: int
    ante_stakes: int
    call_stakes: int
    aa_bonus_stakes: int
    cash_stakes: int
    promo_stakes: int
    cash_paid: int
    refunds: int
    promo_credits: int

    @property
    def stakes(self) -> int:
        """Everything staked in settled rounds: the players' money and the promotions'."""
        return self.cash_stakes + self.promo_stakes

    @property
    def ggr(self) -> int:
        """Gross gaming revenue: the settled rounds' stakes (cash and promotion) minus what
        they paid (a void is refunded whole and counts for nothing)."""
        return self.stakes - self.cash_paid

    @property
    def promotion_cost(self) -> int:
        """What promotions paid: free hands' stakes and promotional credits."""
        return self.promo_stakes + self.promo_credits

    @property
    def ngr(self) -> int:
        """Net gaming revenue: GGR less the promotions' cost, i.e. the players' own stakes
        less everything paid to them (cash paid by rounds, promotional credits)."""
        return self.ggr - self.promotion_cost

    @property
    def rtp(self) -> str:
        """Cash paid as a percentage of the stakes, two decimals, from integers (never a float).

        >>> line = StatementLine("d", "o", "", "EUR", "", 1, 1, 1, 0, 0, 100, 200, 0, 300, 0,
        ...                      300, 0, 0)
        >>> line.rtp, line.ggr, line.ngr
        ('100.00', 0, 0)
        """
        if not self.stakes:
            return ""
        basis_points = (self.cash_paid * 10_000 * 2 + self.stakes) // (2 * self.stakes)
        return f"{basis_points // 100}.{basis_points % 100:02d}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stakes": self.stakes, "ggr": self.ggr,
                "promotion_cost": self.promotion_cost, "ngr": self.ngr,
                "rtp_percent": self.rtp}  # fmt: skip


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
    "tx_id kind player_id round_id campaign_id brand table_id currency mode amount available"
    " held occurred_at event_id"
)


def movements(
    conn: psycopg.Connection[Any], operator: str, day: date | None = None,
    player: str | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Every money movement of one operator (a day's, a player's), with the round's table."""
    start, end = day_bounds(day) if day else (None, None)
    rows = conn.execute(
        "SELECT m.tx_id, m.kind, m.player_id, m.round_id, m.campaign_id, m.brand, r.table_id,"
        " m.currency,"
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


PROMOTIONS_SQL = """
WITH m AS (
    SELECT campaign_id, currency, player_id, kind, amount FROM movements
    WHERE operator_id = %(operator)s AND campaign_id IS NOT NULL AND mode = 'real'
      AND occurred_at >= %(start)s AND occurred_at < %(end)s
), g AS (
    SELECT campaign_id, count(DISTINCT player_id) AS players,
        sum((detail->>'hands')::bigint) AS hands
    FROM player_events
    WHERE operator_id = %(operator)s AND type = 'wallet.free_hands_granted'
      AND occurred_at >= %(start)s AND occurred_at < %(end)s
    GROUP BY 1
), u AS (
    SELECT campaign_id, sum((detail->>'remaining')::bigint) AS given_up
    FROM player_events
    WHERE operator_id = %(operator)s
      AND type IN ('wallet.free_hands_cancelled', 'wallet.free_hands_expired')
      AND occurred_at >= %(start)s AND occurred_at < %(end)s
    GROUP BY 1
), k AS (
    SELECT campaign_id, currency, count(DISTINCT player_id) AS players,
        count(*) FILTER (WHERE kind = 'free_stake')
            - count(*) FILTER (WHERE kind = 'free_stake_refund') AS played,
        coalesce(sum(amount) FILTER (WHERE kind = 'free_stake'), 0)
            - coalesce(sum(amount) FILTER (WHERE kind = 'free_stake_refund'), 0) AS stakes,
        coalesce(sum(amount) FILTER (WHERE kind = 'payout'), 0) AS payouts,
        coalesce(sum(amount) FILTER (WHERE kind = 'promo_credit'), 0) AS credits
    FROM m GROUP BY 1, 2
)
SELECT coalesce(k.campaign_id, g.campaign_id), coalesce(k.currency, ''),
    coalesce(g.players, 0), coalesce(g.hands, 0), coalesce(u.given_up, 0),
    coalesce(k.players, 0), coalesce(k.played, 0), coalesce(k.stakes, 0),
    coalesce(k.payouts, 0), coalesce(k.credits, 0)
FROM k FULL JOIN g USING (campaign_id) LEFT JOIN u USING (campaign_id)
ORDER BY 1, 2
"""


@dataclass(frozen=True)
class PromotionLine:
    """One campaign (free hands or promotional credits) on one UTC day, by currency: hands
    granted and given up (cancelled, expired), free hands played (voided ones do not count),
    what the promotion staked, what free hands paid the players, promotional credits paid."""

    day: str
    campaign_id: str
    currency: str
    players_granted: int
    hands_granted: int
    hands_given_up: int
    players: int
    free_hands_played: int
    promo_stakes: int
    free_hand_payouts: int
    promo_credits: int

    @property
    def cost(self) -> int:
        """What the promotion paid: as the statement's promotion cost, stakes plus credits."""
        return self.promo_stakes + self.promo_credits

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "promotion_cost": self.cost}


def promotions(conn: psycopg.Connection[Any], operator: str, day: date) -> list[PromotionLine]:
    """The day's promotions report of one operator, one line per campaign and currency."""
    start, end = day_bounds(day)
    rows = conn.execute(
        PROMOTIONS_SQL, {"operator": operator, "start": start, "end": end}
    ).fetchall()
    return [PromotionLine(day.isoformat(), *row[:2], *map(int, row[2:])) for row in rows]


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
