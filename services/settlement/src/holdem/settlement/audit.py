"""What a decided round must pass before it is settled: its bet, its stakes, its deck."""

from __future__ import annotations

from holdem.core.cards import Card, CardError
from holdem.core.contracts import BetPlaced, Dealt
from holdem.core.deck import DeckError, deal, verify_commitment
from holdem.core.rules import pay_table
from holdem.settlement.state import Decision, RoundState


def round_problem(round_: RoundState) -> str | None:
    """Why ``round_`` must be voided rather than settled, or None if it can be settled."""
    bet, dealt, decision = round_.bet, round_.dealt, round_.decision
    if bet is None:
        return "no BetPlaced for this round: no stake to settle"
    unknown = pay_table_problem(bet)
    if unknown is not None:
        return unknown
    if dealt is None:
        return "no Dealt for this round: no commitment to verify the deck against"
    if decision is None:
        return "the round has no decision"
    placed = (bet.currency, bet.mode, bet.ante, bet.aa_bonus)
    if (dealt.currency, dealt.mode, dealt.ante, dealt.aa_bonus) != placed:
        return "the stakes in Dealt differ from the stakes in BetPlaced"
    return deck_problem(dealt, decision)


def pay_table_problem(bet: BetPlaced) -> str | None:
    """Why the pay table the bet pinned cannot be applied (one settlement does not have: a
    newer wallet's, or a forged bet), or None."""
    if pay_table(bet.pay_table) is None:
        return f"unknown pay table {bet.pay_table!r}: settlement pays only by the tables it has"
    return None


def deck_problem(dealt: Dealt, decision: Decision) -> str | None:
    """Why the revealed deck is not the one committed to and dealt from, or None if it is."""
    try:
        deck = tuple(Card.parse(text) for text in decision.deck)
        salt = bytes.fromhex(decision.salt)
    except (CardError, ValueError):
        return "the revealed deck or salt cannot be read"
    if not verify_commitment(deck, salt, dealt.commitment):
        return "deck does not verify: sha256(salt || deck) differs from the Dealt commitment"
    try:
        cards = deal(deck)
    except DeckError as error:
        return f"deck does not verify: {error}"
    shown = {
        "player cards": (dealt.player_cards, cards.player),
        "flop": (dealt.flop, cards.flop),
        "dealer cards": (decision.dealer_cards, cards.dealer),
        "turn": ((decision.turn,), (cards.turn,)),
        "river": ((decision.river,), (cards.river,)),
    }
    wrong = [name for name, (seen, due) in shown.items() if tuple(seen) != tuple(map(str, due))]
    if wrong:
        return f"cards not dealt in the deck's order: {', '.join(wrong)}"
    return None
