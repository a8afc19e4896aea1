"""The forced decks' half of the audit (ADR 030): a forced deck deals only play money, and a
round dealt from one says so on its Dealt and its reveal, from the cards its DeckForced set."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from holdem.core.contracts import Called, Dealt, DeckForced, Folded, Mode


def forced_rounds(records: Iterable[Any]) -> int:
    """How many rounds were dealt from a forced deck. ``records``: the audit's ``Record``s."""
    return len(
        {
            (r.message.player_id, r.message.round_id)
            for r in records
            if r.role == "rounds" and isinstance(r.message, Dealt) and r.message.forced
        }
    )


def forced_violations(records: Iterable[Any]) -> list[str]:
    """Broken forced-deck invariants, as sentences: a forced round on real money (anywhere, in
    any mode of deployment), a forced flag the reveal and the deal disagree on, a forced round
    no DeckForced of its player's preceded, or whose cards are not those it forced."""
    ordered = sorted(
        (r for r in records if r.role == "rounds" and r.message is not None),
        key=lambda r: (r.partition, r.offset),
    )
    pending: dict[str, tuple[str, ...]] = {}  # player -> the cards of his latest DeckForced
    forced_by: dict[tuple[str, str], tuple[str, ...] | None] = {}
    dealt: dict[tuple[str, str], Dealt] = {}
    found: list[str] = []
    for record in ordered:
        m = record.message
        if isinstance(m, DeckForced):
            pending[m.player_id] = m.cards
        elif isinstance(m, Dealt) and m.round_id is not None:
            key = (m.player_id, m.round_id)
            name = "/".join(key)
            dealt.setdefault(key, m)
            if not m.forced:
                continue
            if m.mode is not Mode.FUN:
                found.append(f"{name}: a {m.mode.value}-money round dealt from a forced deck")
            forced_by[key] = pending.pop(m.player_id, None)
            if forced_by[key] is None:
                found.append(f"{name}: dealt forced with no DeckForced of its player before it")
        elif isinstance(m, Called | Folded) and m.round_id is not None:
            key = (m.player_id, m.round_id)
            name = "/".join(key)
            deal = dealt.get(key)
            if deal is not None and deal.forced != m.forced:
                found.append(f"{name}: {m.type} says forced={m.forced}, its Dealt {deal.forced}")
            cards = forced_by.get(key)
            if cards is not None and tuple(m.deck[: len(cards)]) != cards:
                found.append(f"{name}: its deck does not start with the cards forced {cards}")
    return found
