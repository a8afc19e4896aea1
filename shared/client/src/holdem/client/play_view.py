"""What `holdem play` shows: money, chips, cards with suit symbols, a round's result, history."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from rich.table import Table
from rich.text import Text

from holdem.client.player import Outcome
from holdem.core.cards import Card
from holdem.core.contracts import Dealt
from holdem.core.limits import TableLimits
from holdem.core.summary import money as money  # minor units for people (the summaries too)

# The wallet's defaults (holdem.wallet.settings, HOLDEM_TABLE_*): a test keeps them in step.
DEFAULT_LIMITS = {"ANTE_MIN": 100, "ANTE_MAX": 100_000, "BONUS_MAX": 50_000}
DEFAULT_DECISION_S = 30.0  # the dealer's HOLDEM_DECISION_TIMEOUT_S default
CHIPS = (100, 500, 2_500, 10_000)  # minor units: 1, 5, 25, 100
RED_SUITS = "♥♦"
AMOUNT = re.compile(r"^\d+(\.\d{1,2})?$")


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
        limits = TableLimits(limit["ANTE_MIN"], limit["ANTE_MAX"], limit["BONUS_MAX"], CHIPS)
        decision = float(env.get("HOLDEM_DECISION_TIMEOUT_S", DEFAULT_DECISION_S))
        return cls(env.get("HOLDEM_TABLE_CURRENCY", "EUR"), limits, decision)


def parse_stake(text: str) -> int:
    """A stake typed by a person, in major units, chips added with ``+``: minor units.

    >>> parse_stake("5"), parse_stake("2.5"), parse_stake("25+5+1"), parse_stake("0")
    (500, 250, 3100, 0)
    >>> parse_stake("five")
    Traceback (most recent call last):
    ValueError: not an amount: 'five' (e.g. 5, 2.50 or 25+5)
    """
    total = 0
    for part in text.replace(" ", "").split("+"):
        if not AMOUNT.match(part):
            raise ValueError(f"not an amount: {text!r} (e.g. 5, 2.50 or 25+5)")
        try:
            total += int(Decimal(part) * 100)
        except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
            raise ValueError(f"not an amount: {text!r}") from None
    return total


def cards(texts: Sequence[str]) -> Text:
    """Cards with suit symbols, hearts and diamonds in red."""
    out = Text()
    for text in texts:
        pretty = Card.parse(text).pretty
        out.append(f" {pretty} ", style="bold red on white" if pretty[1] in RED_SUITS else "bold")
        out.append(" ")
    return out


def table_line(info: TableInfo) -> str:
    chips = " · ".join(money(c) for c in info.limits.chips)
    return (
        f"ante {money(info.limits.ante_min)}-{money(info.limits.ante_max)}, AA Bonus up to "
        f"{money(info.limits.bonus_max)} {info.currency}; chips {chips}; "
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
        grid.add_row("voided", "-", "all refunded", "0.00")
        return grid
    bets = [
        ("Ante", end.ante, end.ante_return),
        ("Call", end.call, end.call_return),
        ("AA Bonus", end.aa_bonus, end.bonus_return),
    ]
    for name, staked, returned in bets:
        if staked:
            grid.add_row(name, money(staked), money(returned), money(returned - staked))
    staked_all = end.ante + end.call + end.aa_bonus
    grid.add_row(
        "total", money(staked_all), money(end.total_return), money(end.total_return - staked_all)
    )
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


def history_view(rounds: Sequence[Outcome]) -> Table:
    """This session's rounds: result, staked, returned, balance after."""
    grid = Table(title="This session", show_edge=False)
    for column in ("#", "round", "result", "staked", "returned", "balance"):
        grid.add_column(column, justify="right" if column not in ("round", "result") else "left")
    for number, outcome in enumerate(rounds, 1):
        end = outcome.settled
        staked = end.ante + end.call + end.aa_bonus if end else 0
        returned = end.total_return if end else 0
        result = end.result if end else "voided"
        row = (outcome.round_id[:12], result, money(staked), money(returned))
        grid.add_row(str(number), *row, money(outcome.balance))
    return grid
