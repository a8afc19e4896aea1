"""Tables as data through the in-memory wallet: admin commands, bets at a table, chips, rebet,
fun mode (ADR 018)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry
from support.tables import TERMS, bet_at, change_table, close_table, create_table, rebet, terms
from support.wallet import (
    balances,
    deposit,
    grant_fun,
    place_bet,
    reset_fun,
    round_events,
    verified_settled,
    voided,
)
from support.wallet_app import Wallet, wallet

from holdem.core.contracts import Mode, Reason, TableRejected, dump, parse
from holdem.core.table_book import TableBook
from holdem.runtime.metrics import Metrics
from holdem.settlement.metrics import SettlementCounters


def table_answers(w: Wallet) -> list[tuple[str, Any]]:
    """(type, table_version or reason) of every record on the tables topic."""
    return [
        (m.type, m.reason if isinstance(m, TableRejected) else m.table_version)
        for m in w.messages("tables")
    ]


def bets(w: Wallet) -> list[Any]:
    return [m for m in w.messages("rounds") if m.type == "round.bet_placed"]


def refusals(w: Wallet) -> list[Reason]:
    return [m.reason for m in w.messages("rounds") if m.type == "round.bet_rejected"]


async def test_a_table_is_opened_changed_and_closed_each_as_the_next_version() -> None:
    async with wallet() as w:
        await w.send("admin", create_table())
        await w.send("admin", change_table(1, ante_max=20_000))
        await w.send("admin", close_table(2))

    assert table_answers(w) == [("table.opened", 1), ("table.changed", 2), ("table.closed", 3)]
    book = w.service.processor.spec.fold_book.__self__  # type: ignore[union-attr]
    assert isinstance(book, TableBook)
    assert (book.tables["t1"].version, book.tables["t1"].open) == (3, False)


async def test_admin_commands_that_cannot_apply_are_refused_with_a_stable_reason() -> None:
    create = create_table(command_id="c1")
    async with wallet() as w:
        await w.send("admin", change_table(1, table_id="nope"))
        await w.send("admin", create)
        await w.send("admin", create.model_copy(update={"event_id": "again"}))  # a resend
        await w.send("admin", create_table(command_id="c1", terms=terms(ante_max=99_999)))
        await w.send("admin", create_table())  # another id, same table
        await w.send("admin", change_table(2, ante_max=20_000))  # stale: it is at 1
        await w.send("admin", change_table(1, operator_id="op-2"))
        await w.send("admin", change_table(1, pay_table="generous-9"))
        await w.send("admin", close_table(1))
        await w.send("admin", change_table(2))

    assert table_answers(w) == [
        ("table.rejected", Reason.UNKNOWN_TABLE),
        ("table.opened", 1),
        ("table.rejected", Reason.DUPLICATE),
        ("table.rejected", Reason.TABLE_EXISTS),
        ("table.rejected", Reason.STALE_VERSION),
        ("table.rejected", Reason.INVALID),
        ("table.rejected", Reason.INVALID),
        ("table.closed", 2),
        ("table.rejected", Reason.TABLE_CLOSED),
    ]


async def test_unreadable_or_misaddressed_admin_records_are_dead_lettered_by_the_wallet() -> None:
    absurd = dump(create_table()).replace(b'"ante_min":100', b'"ante_min":-5')
    upside_down = dump(create_table(terms=terms(ante_min=100))).replace(
        b'"ante_max":10000', b'"ante_max":50'
    )
    async with wallet() as w:
        await w.send("admin", b'{"type": "admin.teleport_table"}', key=b"t1")
        await w.send("admin", absurd, key=b"t1")
        await w.send("admin", upside_down, key=b"t1")
        await w.send("admin", create_table(), key=b"p1")  # keyed by a player, not the table

    reasons = [m.reason for m in w.messages("rejected")]
    assert reasons == [Reason.UNKNOWN_TYPE, Reason.INVALID, Reason.INVALID, "key_mismatch"]
    assert w.seen["tables"] == []


async def test_a_bet_records_its_table_version_and_terms_and_a_change_applies_to_new_rounds() -> (
    None
):
    async with wallet() as w:
        await w.send("commands", deposit(100_000))
        await w.send("admin", create_table())
        await w.send("commands", bet_at("t1", "r1", ante=500))
        await w.send("rounds", voided("r1"))
        await w.send("admin", change_table(1, ante_max=1_000, decision_timeout_s=45))
        await w.send("commands", bet_at("t1", "r2", ante=2_500))

    first, second = bets(w)
    assert (first.table_id, first.table_version, first.decision_timeout_s) == ("t1", 1, 20)
    assert (first.timeout_policy, first.pay_table, first.ante) == ("call", "standard-1", 500)
    assert (second.table_version, second.decision_timeout_s, second.ante) == (2, 45, 1_000)
    assert (second.requested_ante, second.adjusted) == (2_500, True)


async def test_bets_at_unknown_or_closed_tables_or_in_the_wrong_mode_or_currency_are_refused() -> (
    None
):
    async with wallet() as w:
        await w.send("commands", deposit(100_000))
        await w.send("admin", create_table("real"))
        await w.send("admin", create_table("fun", terms=terms(mode=Mode.FUN)))
        await w.send("admin", create_table("gone"))
        await w.send("admin", close_table(1, table_id="gone"))
        await w.send("commands", bet_at("nowhere", "r1", ante=500))
        await w.send("commands", bet_at("gone", "r2", ante=500))
        await w.send("commands", bet_at("fun", "r3", ante=500))  # real money at a fun table
        await w.send("commands", bet_at("real", "r4", ante=500, currency="NOK"))
        await w.send("commands", bet_at("real", "r5", ante=10**12))  # absurd: lowered to max

    assert refusals(w) == [
        Reason.UNKNOWN_TABLE,
        Reason.TABLE_CLOSED,
        Reason.WRONG_MODE,
        Reason.UNSUPPORTED_CURRENCY,
    ]
    [capped] = bets(w)
    assert (capped.round_id, capped.ante, capped.requested_ante) == ("r5", 10_000, 10**12)


async def test_a_bet_that_is_not_a_sum_of_chips_is_refused_or_lowered_as_the_table_says() -> None:
    async with wallet() as w:
        await w.send("commands", deposit(100_000))
        await w.send("admin", create_table("strict", terms=terms(chips=(400, 1_000))))
        adjusting = terms(chips=(400, 1_000), off_chips="adjust")
        await w.send("admin", create_table("lenient", terms=adjusting))
        await w.send("commands", bet_at("strict", "r1", ante=1_300))
        await w.send("commands", bet_at("strict", "r2", ante=1_200))  # 400 + 400 + 400
        await w.send("rounds", voided("r2"))
        await w.send("commands", bet_at("lenient", "r3", ante=1_300, aa_bonus=300))

    assert refusals(w) == [Reason.NOT_CHIPS]
    strict, lenient = bets(w)
    assert (strict.ante, strict.adjusted) == (1_200, False)
    assert (lenient.ante, lenient.aa_bonus, lenient.adjusted) == (1_200, 0, True)


async def test_rebet_repeats_the_last_asked_bets_at_that_table_after_a_win_a_fold_and_a_void() -> (
    None
):
    async with wallet() as w:
        await w.send("commands", deposit(100_000))
        await w.send("admin", create_table())
        await w.send("commands", rebet("t1", "r0"))  # nothing yet
        await w.send("commands", bet_at("t1", "r1", ante=1_000, aa_bonus=500))
        game = round_events("r1")
        for event in (game.dealt(), game.called(), verified_settled("r1")):  # a win
            await w.send("rounds", event)
        await w.send("commands", rebet("t1", "r2"))
        game = round_events("r2")
        for event in (game.dealt(), game.folded()):  # a fold
            await w.send("rounds", event)
        await w.send("commands", rebet("t1", "r3"))
        await w.send("rounds", voided("r3"))  # a void
        await w.send("commands", rebet("t1", "r4"))
        await w.send("commands", rebet("other", "r5"))

    assert refusals(w) == [Reason.NOTHING_TO_REBET, Reason.UNKNOWN_TABLE]
    assert [(b.round_id, b.ante, b.aa_bonus) for b in bets(w)] == [
        (r, 1_000, 500) for r in ("r1", "r2", "r3", "r4")
    ]


async def test_rebet_goes_through_the_table_as_it_is_now() -> None:
    async with wallet() as w:
        await w.send("commands", deposit(100_000))
        await w.send("admin", create_table())
        await w.send("commands", bet_at("t1", "r1", ante=5_000, aa_bonus=2_500))
        await w.send("rounds", voided("r1"))
        await w.send("admin", change_table(1, ante_max=2_500, bonus_max=0))
        await w.send("commands", rebet("t1", "r2"))
        await w.send("rounds", voided("r2"))
        await w.send("admin", change_table(2, ante_min=10_000, ante_max=10_000))
        await w.send("commands", rebet("t1", "r3"))  # still the bets asked for, not the adjusted

    *_, again = bets(w)
    assert (again.round_id, again.ante, again.aa_bonus, again.adjusted) == ("r2", 2_500, 0, True)
    assert (again.requested_ante, again.requested_aa_bonus) == (5_000, 2_500)
    assert refusals(w) == [Reason.BELOW_MINIMUM]


async def test_play_money_is_granted_and_reset_by_the_operator_and_never_touches_real_money() -> (
    None
):
    registry = CollectorRegistry()
    async with wallet(registry) as w:
        await w.send("commands", deposit(50_000))
        await w.send("admin", create_table("fun", terms=terms(mode=Mode.FUN)))
        await w.send("commands", bet_at("fun", "r0", ante=500, mode=Mode.FUN))  # none granted
        await w.send("commands", grant_fun(20_000))
        await w.send("commands", bet_at("fun", "r1", ante=1_000, aa_bonus=500, mode=Mode.FUN))
        state = w.service.processor.state_for("p1")
        during = balances(state, mode=Mode.FUN), balances(state)
        await w.send("commands", reset_fun(5_000))
        after = balances(w.service.processor.state_for("p1"), mode=Mode.FUN)
        await w.send("commands", reset_fun(0))

    assert refusals(w) == [Reason.INSUFFICIENT_FUNDS]
    assert during == ((16_500, 2_000), (50_000, 0))
    assert after == (5_000, 2_000)  # the open round's hold stays held
    assert balances(w.service.processor.state_for("p1"), mode=Mode.FUN) == (0, 2_000)
    assert balances(w.service.processor.state_for("p1")) == (50_000, 0)
    [fun_bet] = bets(w)
    assert fun_bet.mode is Mode.FUN and all(
        m.mode is Mode.FUN for m in w.messages("wallet") if m.round_id == "r1"
    )


def test_a_fun_round_never_reaches_the_money_metrics() -> None:
    registry = CollectorRegistry()
    counters = SettlementCounters(Metrics(registry))
    real = verified_settled("r1")
    for settled in (real, real.model_copy(update={"mode": Mode.FUN})):
        counters.observe(settled)

    sample = registry.get_sample_value
    assert sample("holdem_rounds_total", {"outcome": real.result}) == 1
    assert sample("holdem_wagered_minor_total", {"bet": "ante", "currency": "EUR"}) == real.ante


async def test_a_v1_bet_still_plays_at_the_default_table_of_the_settings() -> None:
    async with wallet() as w:
        await w.send("commands", deposit(100_000))
        await w.send("commands", place_bet("r1", ante=1_234))

    [bet] = bets(w)
    assert (bet.table_id, bet.table_version, bet.ante, bet.decision_timeout_s) == (
        None,
        None,
        1_234,
        None,
    )


async def test_the_table_book_is_rebuilt_from_the_tables_log() -> None:
    async with wallet() as w:
        await w.send("admin", create_table())
        await w.send("admin", change_table(1, ante_max=3_000))
        await w.send("admin", change_table(1, ante_max=4_000))  # stale

    book = TableBook()
    for raw in w.seen["tables"] * 2:  # twice: a replay overlapping the live read
        book.evolve(parse("tables", raw))
    assert (book.tables["t1"].version, book.tables["t1"].terms.ante_max) == (2, 3_000)
    assert TERMS.ante_max != 3_000


async def test_a_resent_rebet_starts_no_second_round_and_absurd_tables_are_refused() -> None:
    again = rebet("t1", "r2")
    too_many_chips = dump(create_table()).replace(
        b'"chips":[100,500,2500]', b'"chips":[' + b",".join(b"%d" % c for c in range(1, 14)) + b"]"
    )
    endless = dump(create_table()).replace(
        b'"decision_timeout_s":20', b'"decision_timeout_s":86400'
    )
    async with wallet() as w:
        await w.send("commands", deposit(100_000))
        await w.send("admin", create_table())
        await w.send("commands", bet_at("t1", "r1", ante=500))
        await w.send("rounds", voided("r1"))
        await w.send("commands", again)
        await w.send("commands", again.model_copy(update={"event_id": "resent"}))
        await w.send("admin", too_many_chips, key=b"t1")
        await w.send("admin", endless, key=b"t1")

    assert [b.round_id for b in bets(w)] == ["r1", "r2"]
    assert [m.reason for m in w.messages("rejected")] == [Reason.INVALID, Reason.INVALID]


def test_the_bets_rebet_repeats_survive_a_snapshot() -> None:
    from holdem.wallet.snapshot import dump_state, load_state
    from holdem.wallet.state import initial_state

    state = initial_state()
    state.rebets = {"p1": {"t1": (500, 100), "t2": (2_500, 0)}}
    assert load_state(dump_state(state)) == state
