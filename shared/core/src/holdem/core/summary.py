"""A finished round as a short text in en, bg, ro, ms or nb, from the rule sheets' terms.

Words come only from ``holdem.core.terms`` (roles, hand names, bet names, push, fold); what the
sheets do not name (win, loss, void, totals) is shown as numbers and symbols, never as an
invented word. Amounts are minor units written with their currency's decimals
(``holdem.core.currencies``: JPY none, BHD three)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from holdem.core.contracts.queries import RoundView
from holdem.core.currencies import money
from holdem.core.terms import LANGUAGES, TermError, term

VOID: Final = "⊘"  # a voided round: every stake refunded
ARROW: Final = "→"


class SummaryError(ValueError):
    """A round that has no summary yet (still open), or a language the catalogue lacks."""


def _signed(minor: int, currency: str) -> str:
    return ("+" if minor > 0 else "±" if minor == 0 else "") + money(minor, currency)


def _cards(cards: Sequence[str]) -> str:
    return " ".join(cards)


def _hand(category: str | None, lang: str) -> str:
    if category is None:
        return ""
    try:
        return f" {ARROW} {term(f'hand.{category}', lang)}"
    except TermError:  # a category the catalogue lacks would be a contract change: show it raw
        return f" {ARROW} {category}"


def render(view: RoundView, lang: str = "en") -> str:
    """Four short lines: the round; the player's cards and hand; the dealer's; the bets, each
    stake and what it returned, and the net result. Raises ``SummaryError`` for an open round
    or an unknown language."""
    if lang not in LANGUAGES:
        raise SummaryError(f"no language {lang!r}; languages: {', '.join(LANGUAGES)}")
    if not view.finished:
        raise SummaryError(f"round {view.round_id} is not finished ({view.state})")
    when = (view.ended_at or view.started_at).strftime("%Y-%m-%d %H:%M:%S")
    table = f" {view.table_id}/v{view.table_version}" if view.table_id else ""
    lines = [f"{view.round_id}{table} {when} {view.currency}"]
    board = _cards((*view.flop, *(c for c in (view.turn, view.river) if c is not None)))
    if view.player_cards:
        player = f"{term('role.player', lang)}: {_cards(view.player_cards)} | {board}"
        lines.append(player + _hand(view.player_category, lang))
    if view.dealer_cards:
        lines.append(
            f"{term('role.dealer', lang)}: {_cards(view.dealer_cards)}"
            + _hand(view.dealer_category, lang)
        )
    lines.append(_bets(view, lang))
    return "\n".join(lines)


def _bets(view: RoundView, lang: str) -> str:
    bets = [(term("bet.ante", lang), view.ante, view.ante_return)]
    if view.call:
        bets.append((term("bet.call", lang), view.call, view.call_return))
    if view.aa_bonus:
        bets.append((term("bet.aa_bonus", lang), view.aa_bonus, view.bonus_return))
    cur = view.currency
    parts = [f"{name} {money(s, cur)} {ARROW} {money(b, cur)}" for name, s, b in bets]
    if view.decision == "fold":
        parts.append(term("control.fold", lang))
    if view.state == "voided":
        parts.append(f"{VOID} {view.void_reason or ''}".rstrip())
    elif view.result == "push":
        parts.append(term("result.push", lang))
    net = view.total_won - view.total_bet
    return " · ".join(parts) + f" = {_signed(net, cur)}"
