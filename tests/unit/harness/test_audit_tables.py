"""The audit's table invariants: versions in order, and each round under its version's terms."""

from __future__ import annotations

from typing import Any

from support.rounds import RoundEvents
from support.tables import table_event

from holdem.core.contracts import TableChanged, TableClosed, TableOpened, dump
from holdem.harness.audit import Record, violations

GAME = RoundEvents(player_id="p1", round_id="r1", ante=1_000, aa_bonus=500)
TERMS_V1 = {
    "table_id": "t1",
    "table_version": 1,
    "decision_timeout_s": 20,
    "timeout_policy": "call",
    "pay_table": "standard-1",
}


def records(*messages: Any) -> list[Record]:
    return [Record.of(m.TOPIC, 0, n, dump(m)) for n, m in enumerate(messages)]


def table_problems(*messages: Any) -> list[str]:
    return [v for v in violations(records(*messages), require_ended=False) if "table" in v]


def test_a_bet_under_the_terms_of_the_version_it_names_is_sound() -> None:
    opened = table_event(TableOpened, 1)
    assert table_problems(opened, GAME.bet_placed(**TERMS_V1)) == []


def test_a_bet_claiming_other_terms_or_a_missing_version_is_reported() -> None:
    opened = table_event(TableOpened, 1)
    longer = GAME.bet_placed(**{**TERMS_V1, "decision_timeout_s": 300})
    unknown = GAME.bet_placed(**{**TERMS_V1, "table_version": 7})
    over = GAME.bet_placed(**TERMS_V1, requested_ante=50_000)  # the table lowers it to 10 000

    assert "are not those of table version 1" in " ".join(table_problems(opened, longer))
    assert "never written" in " ".join(table_problems(opened, unknown))
    assert "not what the table allows" in " ".join(table_problems(opened, over))


def test_versions_out_of_order_and_bets_after_closing_are_reported() -> None:
    log = [
        table_event(TableOpened, 1),
        table_event(TableClosed, 2),
        table_event(TableChanged, 3),
        table_event(TableChanged, 5),
        table_event(TableOpened, 1),
    ]
    late = GAME.bet_placed(**{**TERMS_V1, "table_version": 2})
    found = " ".join(table_problems(*log, late))

    for problem in ("changed after it was closed", "skips one", "written twice", "after it"):
        assert problem in found
