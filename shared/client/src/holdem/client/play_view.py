"""What `holdem play` shows: money, chips, cards with suit symbols, a round's result, history."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from rich.table import Table
from rich.text import Text

from holdem.client.player import FreeHands, Outcome
from holdem.core.cards import Card
from holdem.core.contracts import Dealt
from holdem.core.currencies import CURRENCIES, CurrencyError
from holdem.core.currencies import money as money  # minor units for people (the summaries too)
from holdem.core.limits import TableLimits

# The wallet's defaults (holdem.wallet.settings, HOLDEM_TABLE_*): a test keeps them in step.
DEFAULT_LIMITS = {"ANTE_MIN": 100, "ANTE_MAX": 100_000, "BONUS_MAX": 50_000}
DEFAULT_DECISION_S = 30.0  # the dealer's HOLDEM_DECISION_TIMEOUT_S default
CHIPS = (1, 5, 25, 100)  # major units: the chips in minor units are these × 10**exponent
RED_SUITS = "♥♦"


@dataclass(frozen=True)
class TableInfo:
    """The table as this deployment runs it: currency, limits, decision time."""

    currency: str
    limits: TableLimits
    decision_s: float

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TableInfo:
        """The services' own settings (``HOLDEM_TABLE_*``, ``HOLDEM_DECISION_TIMEOUT_S``) when
        set, else their defaults: the services publish no table description yet.

        >>> info = TableInfo.from_env({"HOLDEM_TABLE_ANTE_MIN": "10"})
        >>> info.currency, info.limits.ante_min, info.limits.ante_max, info.decision_s
        ('EUR', 10, 100000, 30.0)
        """
        env = os.environ if environ is None else environ
        limit = {k: int(env.get(f"HOLDEM_TABLE_{k}", v)) for k, v in DEFAULT_LIMITS.items()}
        currency = env.get("HOLDEM_TABLE_CURRENCY", "EUR")
        unit = 10 ** CURRENCIES.exponent(currency) if CURRENCIES.known(currency) else 100
        chips = tuple(chip * unit for chip in CHIPS)
        limits = TableLimits(limit["ANTE_MIN"], limit["ANTE_MAX"], limit["BONUS_MAX"], chips)
        decision = float(env.get("HOLDEM_DECISION_TIMEOUT_S", DEFAULT_DECISION_S))
        return cls(currency, limits, decision)


def parse_stake(text: str, currency: str = "EUR") -> int:
    """A stake typed by a person, in major units of ``currency``, chips added with ``+``:
    minor units (as many decimals as the currency has, ADR 029).

    >>> parse_stake("5"), parse_stake("2.5"), parse_stake("25+5+1"), parse_stake("0")
    (500, 250, 3100, 0)
    >>> parse_stake("500", "JPY"), parse_stake("2.125", "BHD")
    (500, 2125)
    >>> parse_stake("five")
    Traceback (most recent call last):
    ValueError: not an amount: 'five' (e.g. 5, 2.50 or 25+5)
    >>> parse_stake("2.5", "JPY")
    Traceback (most recent call last):
    ValueError: not an amount: '2.5' (JPY has no decimals)
    """
    exponent = CURRENCIES.exponent(currency) if CURRENCIES.known(currency) else 2
    total = 0
    for part in text.replace(" ", "").split("+"):
        try:
            total += CURRENCIES.parse(part, currency) if exponent != 2 else _cents(part)
        except (CurrencyError, InvalidOperation):
            example = "e.g. 5, 2.50 or 25+5" if exponent else f"{currency} has no decimals"
            raise ValueError(f"not an amount: {text!r} ({example})") from None
    return total


def _cents(part: str) -> int:
    if not re.fullmatch(r"\d+(\.\d{1,2})?", part):
        raise CurrencyError(part)
    return int(Decimal(part) * 100)


def cards(texts: Sequence[str]) -> Text:
    """Cards with suit symbols, hearts and diamonds in red."""
    out = Text()
    for text in texts:
        pretty = Card.parse(text).pretty
        out.append(f" {pretty} ", style="bold red on white" if pretty[1] in RED_SUITS else "bold")
        out.append(" ")
    return out


def table_line(info: TableInfo) -> str:
    """The table's terms, in its currency's units.

    >>> yen = TableInfo.from_env({"HOLDEM_TABLE_CURRENCY": "JPY", "HOLDEM_TABLE_ANTE_MIN": "1"})
    >>> table_line(yen)
    'ante 1-100000, AA Bonus up to 50000 JPY; chips 1 · 5 · 25 · 100; 30s to decide'
    """
    cur, limits = info.currency, info.limits
    chips = " · ".join(money(c, cur) for c in limits.chips)
    return (
        f"ante {money(limits.ante_min, cur)}-{money(limits.ante_max, cur)}, AA Bonus up to "
        f"{money(limits.bonus_max, cur)} {cur}; chips {chips}; "
        f"{info.decision_s:.0f}s to decide"
    )


def deal_view(dealt: Dealt) -> Text:
    view = Text("Your cards: ")
    view.append_text(cards(dealt.player_cards))
    view.append("  Flop: ")
    view.append_text(cards(dealt.flop))
    return view


def result_view(outcome: Outcome, currency: str) -> Table:
    """The dealer's hand revealed, then one line per bet: staked, returned, net."""
    end = outcome.settled
    grid = Table(title=f"Round {outcome.round_id[:12]}", show_edge=False)
    for column in ("bet", "staked", "returned", "net"):
        grid.add_column(column, justify="left" if column == "bet" else "right")
    if end is None:
        grid.add_row("voided", "-", "all refunded", money(0, currency))
        return grid
    bets = [
        ("Ante", end.ante, end.ante_return),
        ("Call", end.call, end.call_return),
        ("AA Bonus", end.aa_bonus, end.bonus_return),
    ]

    def m(amount: int) -> str:
        return money(amount, currency)

    for name, staked, returned in bets:
        if staked:
            grid.add_row(name, m(staked), m(returned), m(returned - staked))
    staked_all = end.ante + end.call + end.aa_bonus
    grid.add_row("total", m(staked_all), m(end.total_return), m(end.total_return - staked_all))
    return grid


def reveal_view(outcome: Outcome) -> Text:
    end, shown = outcome.settled, outcome.revealed
    view = Text()
    if shown is not None:
        view.append("Dealer: ")
        view.append_text(cards(shown.dealer_cards))
        view.append("  Turn, river: ")
        view.append_text(cards((shown.turn, shown.river)))
        if shown.auto:
            view.append(" (decided by the table's timeout policy)", style="yellow")
    if end is not None:
        qualifies = "qualifies" if end.dealer_qualifies else "does not qualify"
        view.append(
            f"\nYou: {words(end.player_category)}; dealer: {words(end.dealer_category)} "
            f"({qualifies}); AA Bonus: {words(end.bonus_category)}. Result: "
        )
        view.append(end.result.upper(), style="bold green" if end.result == "win" else "bold")
    return view


def words(category: str) -> str:
    """``three_of_a_kind`` as ``three of a kind``."""
    return category.replace("_", " ")


def free_hands_lines(campaigns: Sequence[FreeHands]) -> list[str]:
    """One line per campaign with hands left: how many, at which table, for what bets.

    >>> from datetime import UTC, datetime
    >>> c = FreeHands("spring", "t1", "EUR", 1_000, 500, 5, datetime(2026, 3, 1, tzinfo=UTC), 2)
    >>> free_hands_lines([c])
    ['Free hands: 3 of 5 (spring) at t1, ante 10.00 + AA Bonus 5.00 EUR, until 2026-03-01 00:00']
    """
    lines = []
    for c in campaigns:
        if c.remaining:
            bonus = f" + AA Bonus {money(c.aa_bonus, c.currency)}" if c.aa_bonus else ""
            until = c.expires_at.strftime("%Y-%m-%d %H:%M")
            lines.append(
                f"Free hands: {c.remaining} of {c.hands} ({c.campaign_id}) at {c.table_id}, "
                f"ante {money(c.ante, c.currency)}{bonus} {c.currency}, until {until}"
            )
    return lines


def history_view(rounds: Sequence[Outcome], currency: str = "EUR") -> Table:
    """This session's rounds: result, staked, returned, balance after."""
    grid = Table(title="This session", show_edge=False)
    for column in ("#", "round", "result", "staked", "returned", "balance"):
        grid.add_column(column, justify="right" if column not in ("round", "result") else "left")
    for number, outcome in enumerate(rounds, 1):
        end = outcome.settled
        staked = end.ante + end.call + end.aa_bonus if end else 0
        returned = end.total_return if end else 0
        result = end.result if end else "voided"
        row = (outcome.round_id[:12], result, money(staked, currency), money(returned, currency))
        grid.add_row(str(number), *row, money(outcome.balance, currency))
    return grid
