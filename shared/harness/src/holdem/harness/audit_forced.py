"""The forced decks' half of the audit (ADR 030): a forced deck deals only play money, and a
round dealt from one says so on its Dealt and its reveal, from the cards its DeckForced set."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from holdem.core.contracts import Called, Dealt, DeckForced, Folded, Mode

DECISIONS = (Called, Folded)


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
    watch = ForcedWatch()
    for record in ordered:
        watch.feed(record.message)
    return watch.found


class ForcedWatch:
    """The forced-deck audit one rounds record at a time (each player's in partition order).
    It holds a player's latest DeckForced and a round's deal until the round's decision."""

    # The types ``feed`` acts on; any other message leaves the watch as it was (``Watches``
    # feeds it these only; tests/unit/harness/test_audit_routes.py shows the rest do nothing).
    READS: tuple[type, ...] = (DeckForced, Dealt, Called, Folded)

    def __init__(self) -> None:
        self.pending: dict[str, tuple[str, ...]] = {}  # player -> his latest DeckForced's cards
        self.dealt: dict[tuple[str, str], tuple[Dealt, tuple[str, ...] | None]] = {}
        self.found: list[str] = []

    def feed(self, m: Any) -> None:
        if isinstance(m, DeckForced):
            self.pending[m.player_id] = m.cards
        elif isinstance(m, Dealt) and m.round_id is not None:
            key = (m.player_id, m.round_id)
            name = "/".join(key)
            cards = None
            if m.forced:
                if m.mode is not Mode.FUN:
                    self.found.append(
                        f"{name}: a {m.mode.value}-money round dealt from a forced deck"
                    )
                cards = self.pending.pop(m.player_id, None)
                if cards is None:
                    self.found.append(
                        f"{name}: dealt forced with no DeckForced of its player before it"
                    )
            self.dealt.setdefault(key, (m, cards))
        elif isinstance(m, DECISIONS) and m.round_id is not None:
            key = (m.player_id, m.round_id)
            name = "/".join(key)
            deal, cards = self.dealt.get(key, (None, None))
            if deal is not None and deal.forced != m.forced:
                self.found.append(
                    f"{name}: {m.type} says forced={m.forced}, its Dealt {deal.forced}"
                )
            if cards is not None and tuple(m.deck[: len(cards)]) != cards:
                self.found.append(f"{name}: its deck does not start with the cards forced {cards}")

    def forget(self, key: tuple[str, str]) -> None:
        """The round is done: its deal is no longer needed."""
        self.dealt.pop(key, None)
