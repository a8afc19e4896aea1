"""Builders of the dealer's events: seal and deal, reveal a decision, void on a malfunction."""

from __future__ import annotations

from typing import Literal

from holdem.core.cards import Card
from holdem.core.contracts import (
    Call,
    Called,
    CommandRejected,
    Dealt,
    DeckSealed,
    Fold,
    Folded,
    Malfunction,
    Message,
    Reason,
    RoundVoided,
    VoidRound,
)
from holdem.core.deck import commit, deal
from holdem.dealer.context import DealerContext
from holdem.dealer.state import UNDECIDED, Round

Decision = Literal["call", "fold"]


def _texts(cards: tuple[Card, ...]) -> tuple[str, ...]:
    return tuple(str(card) for card in cards)


def seal_and_deal(r: Round, ctx: DealerContext) -> list[Message]:
    """A fresh deck to the vault and the public part of the deal to the rounds topic."""
    codes, salt = ctx.new_deck()
    deck = _texts(tuple(Card(code) for code in codes))
    sealed = DeckSealed(
        **ctx.envelope(r.player_id, r.round_id),
        deck=deck,
        salt=salt.hex(),
        commitment=commit(codes, salt),
    )
    return [sealed, dealt(r, sealed.deck, sealed.commitment, ctx)]


def dealt(r: Round, deck: tuple[str, ...], commitment: str, ctx: DealerContext) -> Dealt:
    """The player's cards and the flop; the dealer's cards, turn and river stay in the vault."""
    cards = deal([Card.parse(text) for text in deck])
    return Dealt(
        **ctx.envelope(r.player_id, r.round_id),
        player_cards=(str(cards.player[0]), str(cards.player[1])),
        flop=(str(cards.flop[0]), str(cards.flop[1]), str(cards.flop[2])),
        commitment=commitment,
        currency=r.currency,
        mode=r.mode,
        ante=r.ante,
        aa_bonus=r.aa_bonus,
    )


def reveal(
    r: Round, decision: Decision, ctx: DealerContext, *, auto: bool, command_id: str | None
) -> list[Message]:
    """Called or Folded with the rest of the deal and the deck and salt behind the commitment."""
    if len(r.deck) != 52:
        return malfunction(r, ctx, "dealer", "deck_missing: no sealed deck in the vault")
    cards = deal([Card.parse(text) for text in r.deck])
    kind = Called if decision == "call" else Folded
    return [
        kind(
            **ctx.envelope(r.player_id, r.round_id),
            turn=str(cards.turn),
            river=str(cards.river),
            dealer_cards=(str(cards.dealer[0]), str(cards.dealer[1])),
            deck=r.deck,
            salt=r.salt,
            auto=auto,
            command_id=command_id,
        )
    ]


def malfunction(
    r: Round, ctx: DealerContext, source: str, reason: str, command_id: str | None = None
) -> list[Message]:
    """A Malfunction, and for a round the dealer still owns (undecided) its RoundVoided too."""
    event = Malfunction(
        **ctx.envelope(r.player_id, r.round_id),
        source=source,
        reason=reason[:500],
        command_id=command_id,
    )
    if r.phase not in UNDECIDED:
        return [event]
    return [event, void(r, ctx, event.event_id, f"{source}: {reason}")]


def void(r: Round, ctx: DealerContext, malfunction_id: str, reason: str) -> RoundVoided:
    # The reason starts with the malfunction's source: the voids metric labels by that prefix.
    return RoundVoided(
        **ctx.envelope(r.player_id, r.round_id),
        malfunction_id=malfunction_id,
        reason=reason[:500],
    )


def rejected(
    command: Call | Fold | VoidRound, reason: Reason, detail: str, ctx: DealerContext
) -> CommandRejected:
    """The refusal goes to the commanding player's stream, whoever owns the round."""
    return CommandRejected(
        **ctx.envelope(command.player_id, command.round_id),
        command_id=command.command_id,
        command_type=command.type,
        reason=reason,
        detail=detail,
    )
