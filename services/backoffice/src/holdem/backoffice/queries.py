"""What the back office's pages read: round search, one round with its money, a player's
history, flagged activity. Every query is scoped to one operator (tenant isolation)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from holdem.core.contracts import Mode
from holdem.core.verify import VerificationError, expected_settled

SEARCH_LIMIT = 200
# round_money (migration 0002): whose money the stakes were, what the player was paid
ROUND_MONEY = "rounds JOIN round_money USING (operator_id, player_id, round_id)"
ROUND_LIST = (
    "SELECT player_id, round_id, brand, table_id, table_version, currency, status, result,"
    " bet_at, ended_at, total_bet, total_return, ante, aa_bonus, campaign_id, cash_stake,"
    f" promo_stake, cash_paid FROM {ROUND_MONEY}"
)


@dataclass(frozen=True)
class Search:
    """A round search; every field optional. Amounts: a round's total stake (minor units)."""

    player: str | None = None
    round_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    brand: str | None = None
    table: str | None = None
    outcome: str | None = None
    min_amount: int | None = None
    max_amount: int | None = None

    def filters(self) -> tuple[list[str], list[Any]]:
        clauses, params = [], []
        for column, op, value in (
            ("player_id", "=", self.player), ("round_id", "=", self.round_id),
            ("bet_at", ">=", self.since), ("bet_at", "<", self.until), ("brand", "=", self.brand),
            ("table_id", "=", self.table), ("coalesce(result, status)", "=", self.outcome),
            ("coalesce(total_bet, ante + aa_bonus)", ">=", self.min_amount),
            ("coalesce(total_bet, ante + aa_bonus)", "<=", self.max_amount),
        ):  # fmt: skip
            if value is not None and value != "":
                clauses.append(f"{column} {op} %s")
                params.append(value)
        return clauses, params


def search_rounds(
    conn: psycopg.Connection[Any], operator: str, search: Search
) -> list[dict[str, Any]]:
    clauses, params = search.filters()
    where = " AND ".join(["operator_id = %s", *clauses])
    query = f"{ROUND_LIST} WHERE {where} ORDER BY bet_at DESC LIMIT {SEARCH_LIMIT}"
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, [operator, *params]).fetchall()


def player_history(
    conn: psycopg.Connection[Any], operator: str, player: str
) -> list[dict[str, Any]]:
    return search_rounds(conn, operator, Search(player=player))


def round_detail(
    conn: psycopg.Connection[Any], operator: str, player: str, round_id: str
) -> dict[str, Any] | None:
    """The round, its bets, its money movements with the balances, its table's terms, and the
    verification of its deck commitment and of its result, recomputed here."""
    with conn.cursor(row_factory=dict_row) as cur:
        key = (operator, player, round_id)
        found = cur.execute(
            f"SELECT * FROM {ROUND_MONEY} WHERE operator_id = %s AND player_id = %s"
            " AND round_id = %s",
            key,
        ).fetchone()
        if found is None:
            return None
        found["bets"] = cur.execute(
            "SELECT bet_type, stake, returned FROM bets WHERE operator_id = %s AND player_id = %s"
            " AND round_id = %s ORDER BY array_position(ARRAY['ante','aa_bonus','call'], bet_type)",
            key,
        ).fetchall()
        for bet in found["bets"]:
            bet.update(bet_money(bet, found["free_hand"]))
        found["movements"] = cur.execute(
            "SELECT tx_id, kind, amount, available, held, occurred_at, campaign_id FROM movements"
            " WHERE operator_id = %s AND player_id = %s AND round_id = %s"
            " ORDER BY occurred_at, source",
            key,
        ).fetchall()
        found["terms"] = None
        if found["table_id"] and found["table_version"]:
            terms = cur.execute(
                "SELECT terms FROM table_versions WHERE operator_id = %s AND table_id = %s"
                " AND table_version = %s",
                (operator, found["table_id"], found["table_version"]),
            ).fetchone()
            found["terms"] = terms["terms"] if terms else None
    found.update(balances(found["movements"]))
    found["verification"] = verification(found)
    found["timeline"] = timeline(found)
    return found


def bet_money(bet: dict[str, Any], free_hand: bool) -> dict[str, Any]:
    """Who funded a bet and what the player was paid for it: a free hand's ante and bonus are
    the promotion's, so only their winnings beyond the stake are paid (ADR 029).

    >>> bet_money({"bet_type": "ante", "stake": 500, "returned": 1000}, True)
    {'funded_by': 'promotion', 'paid': 500}
    >>> bet_money({"bet_type": "call", "stake": 1000, "returned": 2000}, True)
    {'funded_by': 'player', 'paid': 2000}
    """
    if free_hand and bet["bet_type"] != "call":
        return {"funded_by": "promotion", "paid": max(0, bet["returned"] - bet["stake"])}
    return {"funded_by": "player", "paid": bet["returned"]}


def timeline(r: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of the round with its time, in time order: bet, deal, decision, reveal,
    settlement or void, and each money movement (the wallet's own time)."""
    steps = [{"at": r["bet_at"], "step": "bet"}]
    if r["dealt_at"]:
        steps.append({"at": r["dealt_at"], "step": "deal"})
    if r["decided_at"]:
        steps += [
            {"at": r["decided_at"], "step": "decision"},
            {"at": r["decided_at"], "step": "reveal"},
        ]
    if r["status"] in ("settled", "voided") and r["ended_at"]:
        steps.append(
            {"at": r["ended_at"], "step": "settlement" if r["status"] == "settled" else "void"}
        )
    steps += [{"at": m["occurred_at"], "step": "movement", "movement": m} for m in r["movements"]]
    order = {"bet": 0, "movement": 1, "deal": 2, "decision": 3, "reveal": 4}
    return sorted(steps, key=lambda step: (step["at"], order.get(step["step"], 5)))


def balances(moves: list[dict[str, Any]]) -> dict[str, int | None]:
    """Available + held before the stake and after the round's last movement (a free hand's
    stake, paid by the promotion, took nothing of the player's: ADR 029)."""
    stake = next((m for m in moves if m["kind"] in ("stake", "free_stake")), None)
    if stake is None:
        return {"balance_before": None, "balance_after": None}
    last, own = moves[-1], stake["amount"] if stake["kind"] == "stake" else 0
    return {
        "balance_before": stake["available"] + stake["held"] + own,
        "balance_after": last["available"] + last["held"],
    }


def verification(r: dict[str, Any]) -> dict[str, Any]:
    """Does the revealed deck verify against the commitment of the deal, and do the rules give
    the stored result? ``verified`` None: nothing revealed yet (or a void before the deal)."""
    if not r.get("deck") or not r.get("salt") or not r.get("commitment"):
        return {"verified": None, "detail": "not revealed"}
    try:
        expected = expected_settled(
            deck=r["deck"], salt=r["salt"], commitment=r["commitment"], currency=r["currency"],
            mode=Mode(r["mode"]), ante=r["ante"], aa_bonus=r["aa_bonus"], decision=r["decision"],
        )  # fmt: skip
    except VerificationError as error:
        return {"verified": False, "detail": str(error)}
    result_ok = r["status"] != "settled" or (
        expected["total_return"] == r["total_return"] and expected["result"] == r["result"]
    )
    return {
        "verified": True,
        "result_matches": result_ok,
        "expected_total_return": expected["total_return"],
        "detail": "sha256(salt || deck) equals the commitment of the deal",
    }


def flagged(
    conn: psycopg.Connection[Any], operator: str, big_amount: int, big_multiple: int
) -> dict[str, list[dict[str, Any]]]:
    """Big wins (money and stake multiple), voids, seamless refusals and timeouts, settlement
    mismatches: the newest first, 200 of each at most."""
    with conn.cursor(row_factory=dict_row) as cur:
        wins = cur.execute(
            f"{ROUND_LIST} WHERE operator_id = %s AND status = 'settled'"
            " AND (total_return - total_bet > %s OR total_return > %s * total_bet)"
            " ORDER BY ended_at DESC LIMIT 200",
            (operator, big_amount, big_multiple),
        ).fetchall()
        voids = cur.execute(
            "SELECT player_id, round_id, reason, voided_at FROM voids WHERE operator_id = %s"
            " ORDER BY voided_at DESC LIMIT 200",
            (operator,),
        ).fetchall()
        seamless = cur.execute(
            "SELECT s.player_id, s.round_id, s.tx_id, s.kind, s.amount, a.answer, a.reason,"
            " coalesce(a.occurred_at, s.requested_at) AS at FROM seamless s"
            " LEFT JOIN seamless_replies a USING (operator_id, player_id, tx_id)"
            " WHERE s.operator_id = %s AND (a.answer IN ('debit_rejected', 'reply_refused')"
            " OR (s.kind = 'rollback' AND NOT EXISTS (SELECT 1 FROM rounds r WHERE"
            " r.operator_id = s.operator_id AND r.player_id = s.player_id"
            " AND r.round_id = s.round_id))) ORDER BY at DESC LIMIT 200",
            (operator,),
        ).fetchall()
        mismatches = cur.execute(
            "SELECT player_id, round_id, source, reason, occurred_at FROM malfunctions"
            " WHERE operator_id = %s AND refuses_settled ORDER BY occurred_at DESC LIMIT 200",
            (operator,),
        ).fetchall()
    return {"big_wins": wins, "voids": voids, "seamless": seamless, "mismatches": mismatches}


def player_state(conn: psycopg.Connection[Any], operator: str, player: str) -> dict[str, Any]:
    """A player's promotions and protection: campaigns and promotional credits (granted, used,
    given up, what they paid), limits, blocks, reality checks, and his sessions' ends."""
    key = (operator, player)
    with conn.cursor(row_factory=dict_row) as cur:
        events = cur.execute(
            "SELECT type, campaign_id, detail, occurred_at FROM player_events"
            " WHERE operator_id = %s AND player_id = %s ORDER BY occurred_at DESC LIMIT 500",
            key,
        ).fetchall()
        campaigns = cur.execute(
            "SELECT campaign_id, currency,"
            " count(*) FILTER (WHERE kind = 'free_stake')"
            "   - count(*) FILTER (WHERE kind = 'free_stake_refund') AS played,"
            " coalesce(sum(amount) FILTER (WHERE kind = 'free_stake'), 0)"
            "   - coalesce(sum(amount) FILTER (WHERE kind = 'free_stake_refund'), 0) AS stakes,"
            " coalesce(sum(amount) FILTER (WHERE kind = 'payout'), 0) AS payouts,"
            " coalesce(sum(amount) FILTER (WHERE kind = 'promo_credit'), 0) AS credits"
            " FROM movements WHERE operator_id = %s AND player_id = %s"
            " AND campaign_id IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2",
            key,
        ).fetchall()
        sessions = cur.execute(
            "SELECT session_id, table_id, started_at, ended_at, end_reason FROM sessions"
            " WHERE operator_id = %s AND player_id = %s ORDER BY started_at DESC LIMIT 100",
            key,
        ).fetchall()
    for found in campaigns:
        for column in ("stakes", "payouts", "credits"):
            found[column] = int(found[column])
    return {"events": events, "campaigns": campaigns, "sessions": sessions}


def log_search(
    conn: psycopg.Connection[Any], user: Any, page: str, query: dict[str, Any],
    player: str | None = None, round_id: str | None = None,
) -> None:  # fmt: skip
    """Who looked at what: every search and every player or round opened."""
    conn.execute(
        "INSERT INTO search_log (username, operator_id, page, player_id, round_id, query)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (user.username, user.operator_id, page, player, round_id, Jsonb(query)),
    )
