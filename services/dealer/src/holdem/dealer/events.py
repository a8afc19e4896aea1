"""Builders of the dealer's events: seal and deal, reveal a decision, void on a malfunction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from holdem.core.cards import FULL_DECK
from holdem.core.contracts import (
    Call,
    Called,
    CommandRejected,
    Dealt,
    DeckForced,
    DeckForceRejected,
    DeckSealed,
    Fold,
    Folded,
    ForceNextDeck,
    ForceRefusal,
    Malfunction,
    Message,
    Reason,
    RoundVoided,
    VoidRound,
)
from holdem.core.deck import deal, ensure_full_deck
from holdem.core.strategy import optimal
from holdem.dealer.context import DealerContext, TimeoutPolicy
from holdem.dealer.state import UNDECIDED, Round
from holdem.dealer.vault import Opened

Decision = Literal["call", "fold"]
# Each card code's text: a revealed deck is 52 look-ups, not 52 Card objects printed (issue 28).
CARD_TEXT: tuple[str, ...] = tuple(str(card) for card in FULL_DECK)


def seal_and_deal(
    r: Round,
    ctx: DealerContext,
    session_id: str | None = None,
    forced: tuple[int, ...] | None = None,
) -> list[Message]:
    """A fresh deck sealed to the vault and the public part of the deal to the rounds topic;
    ``forced``: its first cards (a forced deck, ADR 030), the rest still the CSPRNG's."""
    shuffled, salt = ctx.new_deck()
    codes = shuffled if forced is None else forced_deck(forced, shuffled)
    sealed = DeckSealed(
        **ctx.envelope(r.player_id, r.round_id),
        **ctx.the_vault().seal(r.round_id, r.player_id, codes, salt),
    )
    deal_ = dealt(r, tuple(codes), sealed.commitment, ctx, session_id, forced=forced is not None)
    return [sealed, deal_]


def forced_deck(first: tuple[int, ...], shuffled: Sequence[int]) -> tuple[int, ...]:
    """``first``, then the other cards in the order of ``shuffled`` (a uniform shuffle of the
    52: what it leaves of them is a uniform shuffle of the rest)."""
    taken = set(first)
    deck = (*first, *(code for code in shuffled if code not in taken))
    ensure_full_deck(deck)
    return deck


def is_forced_deck(first: tuple[int, ...] | None, codes: Sequence[int]) -> bool:
    """Whether a deck the vault holds starts with the pending forced cards ``first``."""
    return first is not None and tuple(int(code) for code in codes[: len(first)]) == first


def opened_deck(r: Round, ctx: DealerContext) -> Opened | None:
    """The round's deck and salt from its vault record; None if the vault has none for it."""
    return None if r.sealed is None else ctx.the_vault().open(r.sealed)


def dealt(
    r: Round,
    codes: tuple[int, ...],
    commitment: str,
    ctx: DealerContext,
    session_id: str | None = None,
    *,
    forced: bool = False,
) -> Dealt:
    """The player's cards and the flop; the dealer's cards, turn and river stay in the vault;
    ``session_id``: the session the round is played in (ADR 020)."""
    cards = deal(codes)
    return Dealt(
        **ctx.envelope(r.player_id, r.round_id),
        player_cards=(str(cards.player[0]), str(cards.player[1])),
        flop=(str(cards.flop[0]), str(cards.flop[1]), str(cards.flop[2])),
        commitment=commitment,
        currency=r.currency,
        mode=r.mode,
        ante=r.ante,
        aa_bonus=r.aa_bonus,
        session_id=session_id,
        forced=forced,
    )


def reveal(
    r: Round, decision: Decision, ctx: DealerContext, *, auto: bool, command_id: str | None
) -> list[Message]:
    """Called or Folded with the rest of the deal and the deck and salt behind the commitment."""
    opened = opened_deck(r, ctx)
    if opened is None:
        return malfunction(r, ctx, "dealer", "deck_missing: no sealed deck in the vault")
    cards = deal(opened.codes)
    kind = Called if decision == "call" else Folded
    return [
        kind(
            **ctx.envelope(r.player_id, r.round_id),
            turn=str(cards.turn),
            river=str(cards.river),
            dealer_cards=(str(cards.dealer[0]), str(cards.dealer[1])),
            # The vault's codes are a full deck (checked when sealed and when opened).
            deck=tuple(CARD_TEXT[code] for code in opened.codes),
            salt=opened.salt.hex(),
            auto=auto,
            command_id=command_id,
            forced=r.forced,
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


def auto_decision(policy: TimeoutPolicy, r: Round, ctx: DealerContext) -> Decision:
    """The table's decision for a player who did not decide in time."""
    if policy is TimeoutPolicy.CALL:
        return "call"
    if policy is TimeoutPolicy.FOLD:
        return "fold"
    # OPTIMAL: the player's best play by exact EV (a lookup in the table holdem-core ships,
    # read when the dealer starts).
    opened = opened_deck(r, ctx)
    if opened is None:  # no deck: the reveal reports it (deck_missing) whatever is decided
        return "fold"
    cards = deal(opened.codes)
    return optimal(cards.player, cards.flop)


def deck_forced(command: ForceNextDeck, ctx: DealerContext) -> DeckForced:
    return DeckForced(
        **ctx.envelope(command.player_id, None), command_id=command.command_id, cards=command.cards
    )


def force_rejected(
    command: ForceNextDeck, reason: ForceRefusal, detail: str, ctx: DealerContext
) -> DeckForceRejected:
    return DeckForceRejected(
        **ctx.envelope(command.player_id, None),
        command_id=command.command_id,
        reason=reason,
        detail=detail,
    )
