"""Forced decks (ADR 030): a test-mode dealer deals a player's next play-money round from the
cards an operator set, once, sealed and committed as any deck; settlement pays it by the rules;
a dealer not in test mode refuses, and a real-money round is never dealt from one."""

from __future__ import annotations

import uuid
from copy import deepcopy
from typing import Any

import pytest
from pydantic import ValidationError
from support.dealer import GAME, TABLE, VAULT, call, fold, void_round
from support.deciders import NOW, Decider
from support.rounds import RoundEvents
from support.settlement import SETTLEMENT

from holdem.core.cards import Card
from holdem.core.contracts import (
    BetPlaced,
    Called,
    ContractError,
    Dealt,
    DeckForced,
    DeckForceRejected,
    DeckSealed,
    Folded,
    ForceNextDeck,
    ForceRefusal,
    Mode,
    Reason,
    Settled,
    dump,
    parse,
)
from holdem.core.deck import shuffle, verify_commitment
from holdem.dealer import snapshot
from holdem.dealer.app import csprng_deck
from holdem.dealer.decide import bind
from holdem.dealer.state import DealerState, evolve, initial_state

FUN = RoundEvents(mode=Mode.FUN)
# player, dealer, flop, turn, river (holdem.core.deck.deal's order)
ROYAL = ("As", "Ks", "4c", "4d", "Qs", "Js", "Ts", "2h", "7d")  # dealer qualifies on 4s
AA_FLUSH = ("Ah", "Kh", "8c", "8d", "2h", "7h", "9h", "3c", "Jd")  # AA Bonus: a flush
NOT_QUALIFYING = ("Ah", "Kd", "2c", "7d", "9s", "5h", "Jc", "3s", "Qd")  # dealer: queen high


def dealer(test_mode: bool = True, deck: Any = None) -> Decider[DealerState]:
    source = deck or (lambda: (GAME.deck, GAME.salt))
    return Decider[DealerState](
        initial_state, evolve, bind(TABLE, source, VAULT, test_mode), copy=deepcopy
    )


def force(cards: tuple[str, ...], player_id: str = "p1", command_id: str | None = None) -> Any:
    return ForceNextDeck(
        event_id=uuid.uuid4().hex,
        command_id=command_id or uuid.uuid4().hex,
        player_id=player_id,
        occurred_at=NOW,
        cards=cards,
    )


def bet(round_id: str, mode: Mode = Mode.FUN) -> BetPlaced:
    return RoundEvents(round_id=round_id, mode=mode).bet_placed()


def play(
    cards: tuple[str, ...], decision: str = "call", decider: Decider[DealerState] | None = None
) -> tuple[Dealt, Called | Folded, Settled]:
    """Force ``cards``, play a fun round to its decision, settle it by the settlement service."""
    d = decider or dealer(deck=csprng_deck)
    state, [forced] = d.when(d.given([]), force(cards))
    assert isinstance(forced, DeckForced)
    placed = bet("r1")
    state, [sealed, dealt] = d.when(state, placed)
    assert isinstance(sealed, DeckSealed) and isinstance(dealt, Dealt)
    state, [reveal] = d.when(state, call() if decision == "call" else fold())
    assert isinstance(reveal, Called | Folded)
    settle = SETTLEMENT.given([placed, dealt])
    _, out = SETTLEMENT.when(settle, reveal)
    [settled] = [e for e in out if isinstance(e, Settled)]
    return dealt, reveal, settled


def test_a_forced_royal_flush_pays_100_to_1_on_the_ante_and_25_to_1_on_the_bonus() -> None:
    dealt, _, settled = play(ROYAL)

    assert dealt.player_cards == ("As", "Ks") and dealt.flop == ("Qs", "Js", "Ts")
    assert settled.player_category == "royal_flush" and settled.dealer_qualifies
    assert settled.ante_return == 10 + 100 * 10  # stake back plus 100 x 10 minor units
    assert settled.call_return == 2 * 20  # the call paid 1 to 1 against a qualifying dealer
    assert settled.bonus_return == 5 + 25 * 5  # a royal flush is a flush or better
    assert settled.total_return == 1010 + 40 + 130


def test_a_forced_aa_bonus_flush_pays_25_to_1() -> None:
    _, _, settled = play(AA_FLUSH)

    assert settled.bonus_category == "flush"
    assert settled.bonus_return == 5 + 25 * 5


def test_a_forced_dealer_who_does_not_qualify_pays_the_ante_and_pushes_the_call() -> None:
    _, reveal, settled = play(NOT_QUALIFYING)

    assert reveal.dealer_cards == ("2c", "7d") and (reveal.turn, reveal.river) == ("3s", "Qd")
    assert not settled.dealer_qualifies
    assert settled.ante_return == 2 * 10  # ace high: straight or less, 1 to 1
    assert settled.call_return == 20  # returned
    assert settled.bonus_return == 0  # ace-king high loses the AA Bonus


def test_the_forced_round_is_sealed_and_committed_as_any_and_says_it_is_forced() -> None:
    dealt, reveal, _ = play(ROYAL[:4])

    deck = [Card.parse(text) for text in reveal.deck]
    assert verify_commitment(deck, bytes.fromhex(reveal.salt), dealt.commitment)
    assert reveal.deck[:4] == ROYAL[:4] and sorted(deck) == list(range(52))
    assert dealt.forced and reveal.forced
    assert reveal.salt != GAME.salt.hex()  # the CSPRNG's salt, not a fixed one


def test_the_cards_not_forced_are_the_shuffle_s_in_its_order() -> None:
    shuffled = shuffle()
    d = dealer(deck=lambda: (shuffled, bytes(32)))
    _, reveal, _ = play(ROYAL[:2], decider=d)

    rest = [str(c) for c in shuffled if str(c) not in ROYAL[:2]]
    assert list(reveal.deck) == [*ROYAL[:2], *rest]


def test_a_fold_reveals_forced_too() -> None:
    _, reveal, settled = play(ROYAL, decision="fold")

    assert isinstance(reveal, Folded) and reveal.forced and settled.total_return == 0


def test_a_dealer_not_in_test_mode_refuses_typed_and_deals_the_next_round_normally() -> None:
    d = dealer(test_mode=False)
    state, [refused] = d.when(d.given([]), force(ROYAL))

    assert isinstance(refused, DeckForceRejected)
    assert refused.reason is ForceRefusal.TEST_MODE_ONLY and not state.forced
    state, [_, dealt] = d.when(state, bet("r1"))
    assert not dealt.forced and dealt.player_cards == ("As", "Ad")  # GAME's deck


def test_a_real_money_round_is_never_dealt_from_a_forced_deck_and_leaves_it_pending() -> None:
    d = dealer()
    state, _ = d.when(d.given([]), force(ROYAL))

    state, [_, real] = d.when(state, bet("r1", Mode.REAL))
    assert not real.forced and real.player_cards == ("As", "Ad")
    assert state.forced["p1"] == tuple(Card.parse(c) for c in ROYAL)
    state, _ = d.when(state, fold("r1"))
    state, [_, fun] = d.when(state, bet("r2"))
    assert fun.forced and fun.player_cards == ("As", "Ks")


def test_the_forced_deck_is_consumed_once_and_a_new_one_replaces_the_pending_one() -> None:
    d = dealer()
    state, _ = d.when(d.given([]), force(ROYAL))
    state, _ = d.when(state, force(AA_FLUSH))  # replaces it

    state, [_, first] = d.when(state, bet("r1"))
    state, _ = d.when(state, fold("r1"))
    state, [_, second] = d.when(state, bet("r2"))

    assert first.forced and first.player_cards == ("Ah", "Kh")
    assert not second.forced and not state.forced


def test_the_log_rebuilds_the_pending_deck_and_an_event_read_again_consumes_nothing() -> None:
    d = dealer()
    log: list[Any] = []
    state, out = d.when(d.given([]), force(ROYAL))
    log += out
    rebuilt = d.given(log)
    assert rebuilt.forced == state.forced  # the pending deck is state rebuilt from the log

    state, out = d.when(state, bet("r1"))
    log += out
    assert not d.given(log).forced  # consumed, in a replay too
    for event in log:  # the dealer's own events back as inputs, a replay overlapping them
        state = evolve(state, event)
    assert not state.forced  # the DeckForced read again does not set the deck again
    state, out = d.when(state, force(AA_FLUSH))
    log += out
    for event in log:
        state = evolve(state, event)
    assert state.forced["p1"][0] == Card.parse("Ah")  # the old Dealt did not consume it


def test_a_resent_force_answers_nothing_and_a_reused_id_is_refused_duplicate() -> None:
    d = dealer()
    command = force(ROYAL, command_id="c1")
    state, _ = d.when(d.given([]), command)

    assert d.when(state, command)[1] == []
    state, _ = d.when(state, bet("r1"))
    [refused] = d.when(state, call(command_id="c1"))[1]
    assert refused.reason is Reason.DUPLICATE
    state, _ = d.when(state, fold("r1", command_id="c2"))
    [again] = d.when(state, force(AA_FLUSH, command_id="c2"))[1]
    assert isinstance(again, DeckForceRejected) and again.reason is ForceRefusal.DUPLICATE
    resent = command.model_copy(update={"event_id": "e2"})  # the same command sent again
    assert d.when(state, resent)[1] == []


def test_the_pending_deck_survives_a_snapshot() -> None:
    d = dealer()
    state, _ = d.when(d.given([]), force(ROYAL))
    state, _ = d.when(state, bet("r1"))  # a forced round in flight
    state, _ = d.when(state, force(AA_FLUSH, player_id="p2"))

    loaded = snapshot.load_state(snapshot.dump_state(state))

    assert loaded == state and loaded.rounds["r1"].forced and set(loaded.forced) == {"p2"}


@pytest.mark.parametrize(
    "cards",
    [
        (),
        ("As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s", "6s", "5s"),  # ten: 9 at most
        ("As", "Ks", "As"),  # a card twice
        ("1s",),  # no such rank
        ("AS",),  # not a card text
    ],
)
def test_bad_cards_are_refused_by_the_model_and_on_the_wire(cards: tuple[str, ...]) -> None:
    with pytest.raises(ValidationError):
        force(cards)
    raw = dump(force(("As",))).replace(b'["As"]', repr(list(cards)).replace("'", '"').encode())
    with pytest.raises(ContractError) as refused:
        parse("commands", raw)
    assert refused.value.reason is Reason.INVALID


def test_a_forced_round_voided_by_the_operator_is_voided_and_its_deck_consumed() -> None:
    d = dealer()
    state, _ = d.when(d.given([]), force(ROYAL))
    state, [_, dealt] = d.when(state, bet("r1"))

    state, out = d.when(state, void_round("r1"), fold_input=False)

    assert dealt.forced and [type(e).__name__ for e in out] == ["Malfunction", "RoundVoided"]
    assert not state.forced
