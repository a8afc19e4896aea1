"""The seamless audit (ADR 015) finds what a broken bridge would leave in the log: a debit
credited twice, credited and rolled back, credited the wrong amount, never ended; a round placed
without a debit; an operator answering one debit both ways."""

from __future__ import annotations

from typing import Any

from support.seamless import Bridged, game
from support.tables import table_event

from holdem.core.contracts import BetPlaced, TableOpened, dump
from holdem.core.contracts.seamless import (
    DebitRejected,
    DebitRejection,
    DebitRequested,
    SeamlessCredited,
    SeamlessRolledBack,
)
from holdem.harness.audit import Record, violations
from holdem.harness.audit_seamless import seamless_violations


def settled_run(decision: str = "call") -> Bridged:
    b = Bridged()
    b.fund("p1")
    b.bet("r1")
    b.deliver()
    b.play(game("r1"), decision)
    b.deliver()
    assert b.violations() == []
    return b


def voided_run() -> Bridged:
    b = Bridged()
    b.fund("p1")
    b.bet("r1")
    b.deliver()
    b.void("r1")
    b.deliver()
    assert b.violations() == []
    return b


def found(messages: list[Any], replies: tuple[Any, ...] | list[Any] = (), **kw: Any) -> str:
    return "\n".join(seamless_violations(messages, replies, **kw))


def test_a_credit_recorded_twice_is_found() -> None:
    b = settled_run()
    credited = b.of(SeamlessCredited)[0]
    again = credited.model_copy(update={"event_id": "again"})
    assert "credited 2 times" in found([*b.published, again])


def test_a_round_credited_and_rolled_back_is_found() -> None:
    b = settled_run()
    credited = b.of(SeamlessCredited)[0]
    rolled = SeamlessRolledBack(**credited.model_dump(exclude={"type"}))
    assert "both credited and rolled back" in found([*b.published, rolled])


def test_a_credit_of_another_amount_than_the_round_returned_is_found() -> None:
    b = settled_run("fold")
    published = [
        m.model_copy(update={"amount": m.amount + 1}) if isinstance(m, SeamlessCredited) else m
        for m in b.published
    ]
    assert "the round returned 200" in found(published)


def test_a_rollback_of_less_than_the_debit_is_found() -> None:
    b = voided_run()
    published = [
        m.model_copy(update={"amount": 1}) if isinstance(m, SeamlessRolledBack) else m
        for m in b.published
    ]
    assert "rolled back 1, the ledger held 300" in found(published)


def test_a_debit_that_never_ended_is_found_once_the_run_is_over() -> None:
    b = settled_run()
    unfinished = [m for m in b.published if not isinstance(m, SeamlessCredited)]
    assert "never ended" in found(unfinished)
    assert found(unfinished, require_closed=False) == ""  # a run stopped mid-round


def test_a_round_placed_without_the_operator_s_debit_is_found() -> None:
    b = settled_run()
    placed = b.of(BetPlaced)[0]
    forged = placed.model_copy(update={"round_id": "r2", "event_id": "forged"})
    debit = b.of(DebitRequested)[0].model_copy(update={"round_id": "r2", "tx_id": "t2"})
    assert "BetPlaced without the operator's debit" in found([*b.published, debit, forged])


def test_money_for_a_round_with_no_debit_is_found() -> None:
    b = settled_run()
    template = b.of(SeamlessCredited)[0]
    stray = template.model_copy(update={"round_id": "r-none", "event_id": "stray"})
    assert "never asked a debit" in found([*b.published, stray])


def test_an_operator_answering_one_debit_both_ways_is_found() -> None:
    b = settled_run()
    debited = b.replies[0]
    fields = debited.model_dump(exclude={"type"})
    refused = DebitRejected(**fields, reason=DebitRejection.OTHER)
    assert "both ways" in found(b.published, [*b.replies, refused])


def test_the_run_audit_reads_a_seamless_log_with_the_tables_in_it() -> None:
    # A seamless deployment's log has table records too: no player, no round, no bridge.
    b = settled_run()
    log = [table_event(TableOpened, 1), *b.published, *b.replies]
    records = [Record.of(m.TOPIC, 0, n, dump(m)) for n, m in enumerate(log)]
    assert [v for v in violations(records) if "table" in v or "debit" in v] == []
    unended = [Record.of(m.TOPIC, 0, n, dump(m)) for n, m in enumerate(log[:2])]  # a debit only
    assert any("the debit never ended" in v for v in violations(unended))
