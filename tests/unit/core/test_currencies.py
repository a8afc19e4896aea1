"""Currencies with their exponent (ADR 029): the table, what it writes and reads, the
summaries, `holdem play` and the back office in the currency's own units."""

from __future__ import annotations

import doctest

import pytest
from support.queries import play
from support.rounds import RoundEvents

from holdem.backoffice.web import money as backoffice_money
from holdem.client import play_view
from holdem.client.play_view import TableInfo, parse_stake, table_line
from holdem.core import currencies as currencies_module
from holdem.core.currencies import ISO_4217, Currencies, CurrencyError, money
from holdem.core.summary import render
from holdem.query.state import evolve, initial_state


def test_doctests_pass() -> None:
    assert doctest.testmod(currencies_module).failed == 0
    assert doctest.testmod(play_view).failed == 0


@pytest.mark.parametrize(
    ("code", "exponent"),
    [("EUR", 2), ("USD", 2), ("JPY", 0), ("KRW", 0), ("ISK", 0), ("CLP", 0), ("BHD", 3),
     ("KWD", 3), ("TND", 3), ("CLF", 4), ("BTC", 8), ("ETH", 8)],
)  # fmt: skip
def test_each_currency_has_its_iso_4217_or_configured_exponent(code: str, exponent: int) -> None:
    assert Currencies().exponent(code) == exponent


def test_configured_codes_add_to_iso_and_cannot_redefine_it() -> None:
    table = Currencies.from_text("ETH=6,USX=4")

    assert (table.exponent("ETH"), table.exponent("USX"), table.exponent("BTC")) == (6, 4, 8)
    for bad in ("JPY=2", "BTC=9", "usx=2", "BTC", "BTC=-1", "ABCD=2"):
        with pytest.raises(CurrencyError):
            Currencies.from_text(bad)
    with pytest.raises(CurrencyError):
        table.exponent("XYZ")
    assert len(ISO_4217) > 150 and all(len(code) == 3 for code in ISO_4217)


def test_amounts_are_written_and_read_in_minor_units_without_rounding() -> None:
    table = Currencies()

    assert [table.format(1_234_567, c) for c in ("JPY", "EUR", "BHD", "BTC")] == [
        "1234567",
        "12345.67",
        "1234.567",
        "0.01234567",
    ]
    assert [table.parse("12.345", "BHD"), table.parse("12", "JPY"), table.parse("1", "BTC")] == [
        12_345,
        12,
        100_000_000,
    ]
    for text, code in (("1.2345", "BHD"), ("1.5", "JPY"), ("-1", "EUR"), ("1e3", "EUR")):
        with pytest.raises(CurrencyError):
            table.parse(text, code)


def test_a_person_types_stakes_in_the_tables_currency() -> None:
    assert parse_stake("1000+500", "JPY") == 1_500
    assert parse_stake("0.5+0.125", "BHD") == 625
    with pytest.raises(ValueError, match="JPY has no decimals"):
        parse_stake("10.5", "JPY")
    with pytest.raises(ValueError):
        parse_stake("0.1255", "BHD")


def test_holdem_play_shows_a_bhd_table_in_fils_and_its_chips_in_dinars() -> None:
    info = TableInfo.from_env({"HOLDEM_TABLE_CURRENCY": "BHD", "HOLDEM_TABLE_ANTE_MIN": "500"})

    assert info.limits.chips == (1_000, 5_000, 25_000, 100_000)
    assert table_line(info).startswith("ante 0.500-100.000, AA Bonus up to 50.000 BHD; chips 1.000")


@pytest.mark.parametrize(
    ("currency", "ante", "line"),
    [
        ("JPY", 500, "ANTE 500 → 1000 · CALL 1000 → 1000 · AA BONUS 250 → 2000 = +2250"),
        ("BHD", 500, "ANTE 0.500 → 1.000 · CALL 1.000 → 1.000 · AA BONUS 0.250 → 2.000 = +2.250"),
        ("EUR", 500, "ANTE 5.00 → 10.00 · CALL 10.00 → 10.00 · AA BONUS 2.50 → 20.00 = +22.50"),
    ],
)
def test_a_rounds_summary_is_written_in_its_currencys_units(
    currency: str, ante: int, line: str
) -> None:
    game = RoundEvents(currency=currency, ante=ante, aa_bonus=ante // 2)
    state = initial_state()
    played = play(game, 100_000)
    for event in [*played.rounds, *played.wallet]:
        state = evolve(state, event)

    text = render(state.books["p1"].rounds["r1"])

    assert text.splitlines()[0].endswith(currency) and text.splitlines()[-1] == line


def test_the_back_office_and_every_display_agree_on_the_exponent() -> None:
    assert backoffice_money(1_234, "BHD") == "1.234 BHD" == f"{money(1_234, 'BHD')} BHD"
    assert backoffice_money(1_234, "JPY") == "1234 JPY"
