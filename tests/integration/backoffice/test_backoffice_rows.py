"""What the projection writes for the log's less common records, on real PostgreSQL: tables,
sessions, the seamless bridge, a Settled the wallet refused, a batch written twice, and the
promotion account's movements (ADR 029)."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest
from support.messages import envelope

from holdem.backoffice import db, store
from holdem.backoffice.queries import balances
from holdem.backoffice.rows import Batch, Where
from holdem.backoffice.synthetic import Books, one_round
from holdem.core import contracts as c
from holdem.core.contracts import seamless as s

pytestmark = pytest.mark.postgres

AT = datetime(2026, 11, 30, 12, tzinfo=UTC)
TERMS = c.TableTerms(operator_id="op-1", currency="EUR", ante_min=100, ante_max=10_000,
                     bonus_max=5_000, chips=(100, 500))  # fmt: skip


def write(dsn: str, messages: list[tuple[str, Any]], start: int = 0) -> None:
    batch = Batch()
    for offset, (role, message) in enumerate(messages, start):
        batch.add(role, Where(f"t.{role}", 0, offset, "op-1", "b1"), message)
    with db.connect(dsn) as conn:
        known = store.positions(conn, ["t.rounds", "t.wallet", "t.tables", "t.seamless_replies"])
        store.write(conn, batch, known)


def rows(dsn: str, query: str) -> list[tuple[Any, ...]]:
    with db.connect(dsn) as conn:
        return conn.execute(query).fetchall()  # type: ignore[arg-type]


def test_table_versions_and_sessions_are_kept(dsn: str) -> None:
    table = {"table_id": "eur-low", "occurred_at": AT, "command_id": "t1", "fingerprint": "0" * 32}
    session = {"session_id": "s-1", "table_id": "eur-low"}
    write(dsn, [
        ("tables", c.TableOpened(event_id="te1", table_version=1, terms=TERMS, **table)),
        ("tables", c.TableChanged(event_id="te2", table_version=2, terms=TERMS, **table)),
        ("rounds", c.SessionStarted(**envelope("p1", round_id="r1", command_id="b1",
                                               idle_timeout_s=900, **session))),
    ])  # fmt: skip
    write(dsn, [("rounds", c.SessionEnded(**envelope("p1", reason="idle_timeout", **session)))], 3)
    assert rows(dsn, "SELECT table_id, table_version, event FROM table_versions ORDER BY 2") == [
        ("eur-low", 1, "opened"), ("eur-low", 2, "changed"),
    ]  # fmt: skip
    assert rows(dsn, "SELECT session_id, first_round_id, end_reason FROM sessions") == [
        ("s-1", "r1", "idle_timeout")
    ]


def test_seamless_requests_resends_and_answers_are_kept(dsn: str) -> None:
    debit = {"round_id": "r1", "tx_id": "d-1", "currency": "EUR", "amount": 1500}
    request = s.DebitRequested(**envelope("p1", ante=500, aa_bonus=0, call_hold=1000,
                                          command_id="b1", requested_ante=500,
                                          requested_aa_bonus=0, fingerprint="0" * 32,
                                          expires_at=AT, **debit))  # fmt: skip
    refused = s.DebitRejected(**envelope("p1", reason="player_blocked", **debit))
    write(dsn, [("wallet", request), ("wallet", request), ("seamless_replies", refused)])
    assert rows(dsn, "SELECT tx_id, kind, sends FROM seamless") == [("d-1", "debit", 2)]
    assert rows(dsn, "SELECT answer, reason FROM seamless_replies") == [
        ("debit_rejected", "player_blocked")
    ]


def test_a_settled_the_wallet_refused_ends_nothing(dsn: str) -> None:
    on_rounds, on_wallet = one_round(Books(), "p1", "r1", AT, random.Random(3))
    settled = on_rounds[-1]
    refusal = c.Malfunction(**envelope("p1", round_id="r1", source="wallet",
                                       reason="settlement_mismatch: test",
                                       causation_id=settled.event_id))  # fmt: skip
    write(dsn, [("rounds", m) for m in on_rounds])
    write(dsn, [("rounds", refusal)], len(on_rounds))
    assert rows(dsn, "SELECT status, total_return FROM rounds") == [("decided", None)]
    assert rows(dsn, "SELECT count(*) FROM bets") == [(0,)]
    assert rows(dsn, "SELECT refuses_settled FROM malfunctions") == [(True,)]
    assert on_wallet


def test_a_batch_from_positions_already_passed_is_refused_whole(dsn: str) -> None:
    on_rounds, _ = one_round(Books(), "p1", "r1", AT, random.Random(4))
    write(dsn, [("rounds", m) for m in on_rounds])
    batch = Batch()
    for offset, m in enumerate(on_rounds):
        batch.add("rounds", Where("t.rounds", 0, offset, "op-1", "b1"), m)
    with db.connect(dsn) as conn, pytest.raises(store.PositionConflictError):
        store.write(conn, batch, {})  # a second writer that read from the start
    assert rows(dsn, "SELECT count(*) FROM rounds") == [(1,)]


def test_the_promotion_accounts_movements_are_kept_by_kind(dsn: str) -> None:
    money = {"currency": "EUR", "held": 0, "occurred_at": AT}
    write(dsn, [
        ("wallet", c.PromoCredited(**envelope("p1", idempotency_key="promo:k1", amount=700,
                                              available=700, campaign_id="cup",
                                              reason="prize", **money))),
        ("wallet", c.FreeStakeTaken(**envelope("p1", round_id="r1", idempotency_key="stake:r1",
                                               amount=150, available=700, campaign_id="cup",
                                               ante=100, aa_bonus=50, **money))),
        ("wallet", c.FreeStakeRefunded(**envelope("p1", round_id="r1", amount=150,
                                                  idempotency_key="free-refund:r1",
                                                  available=700, campaign_id="cup", **money))),
    ])  # fmt: skip

    found = rows(dsn, "SELECT tx_id, kind, amount FROM movements ORDER BY tx_id")
    assert found == [
        ("free-refund:r1", "free_stake_refund", 150),
        ("promo:k1", "promo_credit", 700),
        ("stake:r1", "free_stake", 150),
    ]
    moves = [{"kind": "free_stake", "amount": 150, "available": 700, "held": 0}]
    assert balances(moves) == {"balance_before": 700, "balance_after": 700}  # not the player's
