"""The dealer's decide: deal on BetPlaced, reveal on Call/Fold, refuse precisely, void once."""

from __future__ import annotations

import json

import pytest
from support.dealer import (
    DEALER,
    GAME,
    VAULT,
    call,
    dealer_at,
    fold,
    sealed,
    settled,
    unseal,
    void_round,
    voided_by_settlement,
)
from support.deciders import types_of
from support.rounds import RoundEvents, deck_for

from holdem.core.cards import Card
from holdem.core.contracts import (
    Called,
    CommandRejected,
    Dealt,
    DeckSealed,
    Folded,
    Malfunction,
    Reason,
    RoundVoided,
    dump,
)
from holdem.core.deck import deal, verify_commitment
from holdem.dealer.state import Phase

HIDDEN = ("7c", "2d", "4c", "3h")  # the dealer's cards, turn and river of GAME's deck


DEALT_HISTORY = [GAME.bet_placed(), sealed(), GAME.dealt()]


def history_dealt_by_the_dealer() -> list[object]:
    """BetPlaced and the dealer's own DeckSealed and Dealt, as the log holds them."""
    bet = GAME.bet_placed()
    return [bet, *DEALER.run([], bet)]


def rejection(events: list[object]) -> CommandRejected:
    [event] = events
    assert isinstance(event, CommandRejected)
    return event


# --- dealing ---


def test_a_placed_bet_seals_the_deck_in_the_vault_and_deals_the_player_cards_and_flop() -> None:
    events = DEALER.run([], GAME.bet_placed())

    assert types_of(events) == ["vault.deck_sealed", "round.dealt"]
    vault, dealt = events
    assert isinstance(vault, DeckSealed) and isinstance(dealt, Dealt)
    assert (vault.TOPIC, dealt.TOPIC) == ("vault", "rounds")
    assert unseal(vault) == tuple(map(str, GAME.deck)) and VAULT.open(vault).salt == GAME.salt
    assert vault.commitment == dealt.commitment == GAME.commitment
    assert dealt.player_cards == ("As", "Ad") and dealt.flop == ("Ah", "Ks", "9d")
    assert (dealt.ante, dealt.aa_bonus, dealt.currency) == (10, 5, "EUR")
    assert dealt.causation_id == GAME.bet_placed().event_id


def test_the_dealt_event_on_the_wire_holds_no_dealer_card_turn_river_or_deck() -> None:
    [_, dealt] = DEALER.run([], GAME.bet_placed())

    wire = json.loads(dump(dealt))
    assert not {"dealer_cards", "turn", "river", "deck", "salt"} & wire.keys()
    assert not any(card in dump(dealt).decode() for card in HIDDEN)


def test_dealing_uses_the_core_deal_order_of_the_handlers_deck() -> None:
    game = RoundEvents(deck=deck_for("2c3c", "KhKd", "4d5d6dQsJs"))
    [_, dealt] = dealer_at(game=game).run([], game.bet_placed())

    cards = deal(game.deck)
    assert isinstance(dealt, Dealt)
    assert dealt.player_cards == tuple(map(str, cards.player)) == ("2c", "3c")
    assert dealt.flop == tuple(map(str, cards.flop)) == ("4d", "5d", "6d")


def test_a_redelivered_bet_after_dealing_deals_nothing() -> None:
    assert DEALER.run(history_dealt_by_the_dealer(), GAME.bet_placed()) == []


def test_a_deck_sealed_but_not_dealt_is_dealt_without_a_new_shuffle() -> None:
    never = dealer_at(game=RoundEvents(deck=deck_for("KcKd", "2h3h", "4s5s6s7s8s")))
    events = never.run([sealed()], GAME.bet_placed())

    assert types_of(events) == ["round.dealt"]
    assert isinstance(events[0], Dealt) and events[0].player_cards == ("As", "Ad")


# --- the player's decision ---


def test_a_call_reveals_turn_river_dealer_cards_and_the_deck_that_verifies() -> None:
    history = history_dealt_by_the_dealer()
    [called] = DEALER.run(history, call(command_id="c1"))

    assert isinstance(called, Called)
    cards = deal(GAME.deck)
    assert (called.turn, called.river) == (str(cards.turn), str(cards.river)) == ("4c", "3h")
    assert called.dealer_cards == tuple(map(str, cards.dealer)) == ("7c", "2d")
    deck = [Card.parse(text) for text in called.deck]
    assert verify_commitment(deck, bytes.fromhex(called.salt), history[-1].commitment)
    assert (called.auto, called.command_id) == (False, "c1")


def test_a_fold_reveals_the_deck_and_salt_too() -> None:
    [folded] = DEALER.run(history_dealt_by_the_dealer(), fold(command_id="f1"))

    assert isinstance(folded, Folded)
    assert folded.deck == tuple(map(str, GAME.deck)) and folded.salt == GAME.salt.hex()
    assert (folded.dealer_cards, folded.auto, folded.command_id) == (("7c", "2d"), False, "f1")


def test_the_same_call_redelivered_yields_nothing() -> None:
    first = call(command_id="c1")
    state, _ = DEALER.when(DEALER.given(DEALT_HISTORY), first)

    assert DEALER.when(state, first)[1] == []
    assert DEALER.when(state, call(command_id="c1"))[1] == []  # resent as a new record


def test_a_call_before_dealt_is_out_of_order() -> None:
    refused = rejection(DEALER.run([GAME.bet_placed()], call(command_id="c1")))

    assert (refused.reason, refused.command_id, refused.command_type) == (
        Reason.OUT_OF_ORDER,
        "c1",
        "command.call",
    )


@pytest.mark.parametrize("first", [call, fold])
def test_any_decision_after_a_decision_is_already_decided(first: object) -> None:
    state, _ = DEALER.when(DEALER.given(DEALT_HISTORY), first())  # type: ignore[operator]

    assert rejection(DEALER.when(state, call())[1]).reason == Reason.ALREADY_DECIDED
    assert rejection(DEALER.when(state, fold())[1]).reason == Reason.ALREADY_DECIDED


def test_a_call_for_another_players_round_is_refused_to_that_player() -> None:
    refused = rejection(DEALER.run(DEALT_HISTORY, call(player_id="p2")))

    assert (refused.reason, refused.player_id, refused.round_id) == (
        Reason.NOT_YOUR_ROUND,
        "p2",
        "r1",
    )


def test_a_call_for_an_unknown_round_is_refused_once() -> None:
    command = call(round_id="nope")
    state, events = DEALER.when(DEALER.given(DEALT_HISTORY), command)

    assert rejection(events).reason == Reason.UNKNOWN_ROUND
    assert DEALER.when(state, command)[1] == []
    assert state.get("nope") is None  # a refusal creates no round: garbage costs no memory


def test_a_command_id_is_the_players_across_rounds_a_reuse_on_another_round_is_a_duplicate() -> (
    None
):
    other = RoundEvents(round_id="r2")
    history = [*DEALT_HISTORY, GAME.called(), settled(), other.bet_placed(), sealed(other)]
    state = DEALER.given([*history, other.dealt()])
    state, _ = DEALER.when(state, call(command_id="c1"), fold_input=False)  # r1 already called

    _, events = DEALER.when(state, fold(round_id="r2", command_id="c1"), fold_input=False)

    refused = rejection(events)
    assert (refused.reason, refused.round_id) == (Reason.DUPLICATE, "r2")
    assert "command.call on r1" in refused.detail


def test_a_command_id_reused_for_another_command_on_the_same_round_is_a_duplicate() -> None:
    state, _ = DEALER.when(DEALER.given(DEALT_HISTORY), call(command_id="c1"), fold_input=False)

    _, events = DEALER.when(state, void_round(command_id="c1"), fold_input=False)

    assert rejection(events).reason == Reason.DUPLICATE


def test_two_players_may_use_the_same_command_id() -> None:
    other = RoundEvents(player_id="p2", round_id="r2")
    history = [*DEALT_HISTORY, other.bet_placed(), sealed(other), other.dealt()]
    state, _ = DEALER.when(DEALER.given(history), call(command_id="c1"), fold_input=False)

    _, events = DEALER.when(
        state, call(round_id="r2", player_id="p2", command_id="c1"), fold_input=False
    )

    assert types_of(events) == ["round.called"]


@pytest.mark.parametrize("end", [settled(), voided_by_settlement()])
def test_a_call_after_the_round_closed_is_round_closed(end: object) -> None:
    history = [*DEALT_HISTORY, GAME.called(), end]
    assert rejection(DEALER.run(history, call())).reason == Reason.ROUND_CLOSED


# --- voids ---


def test_void_before_dealing_voids_the_round_and_it_is_never_dealt() -> None:
    state, events = DEALER.when(DEALER.given([GAME.bet_placed()]), void_round(command_id="v1"))

    assert types_of(events) == ["round.malfunction", "round.voided"]
    malfunction, voided = events
    assert isinstance(malfunction, Malfunction) and isinstance(voided, RoundVoided)
    assert (malfunction.source, malfunction.command_id) == ("operator", "v1")
    assert voided.malfunction_id == malfunction.event_id
    assert voided.reason.startswith("operator:")
    assert DEALER.when(state, GAME.bet_placed())[1] == []


def test_void_after_dealing_voids_the_round_and_a_later_call_is_round_closed() -> None:
    state, events = DEALER.when(DEALER.given(DEALT_HISTORY), void_round())

    assert types_of(events) == ["round.malfunction", "round.voided"]
    assert rejection(DEALER.when(state, call())[1]).reason == Reason.ROUND_CLOSED
    assert DEALER.when(state, events[0])[1] == []  # our own Malfunction coming back


def test_void_after_a_call_is_only_a_malfunction_because_settlement_owns_the_round() -> None:
    events = DEALER.run([*DEALT_HISTORY, GAME.called()], void_round())

    assert types_of(events) == ["round.malfunction"]


def test_a_resent_void_yields_nothing() -> None:
    state, _ = DEALER.when(DEALER.given(DEALT_HISTORY), void_round(command_id="v1"))

    assert DEALER.when(state, void_round(command_id="v1"))[1] == []


@pytest.mark.parametrize(
    ("history", "command", "reason"),
    [
        ([], void_round(), Reason.UNKNOWN_ROUND),
        (DEALT_HISTORY, void_round(player_id="p2"), Reason.NOT_YOUR_ROUND),
        ([*DEALT_HISTORY, GAME.called(), settled()], void_round(), Reason.ROUND_CLOSED),
    ],
)
def test_a_void_the_dealer_cannot_apply_is_refused(
    history: list[object], command: object, reason: Reason
) -> None:
    assert rejection(DEALER.run(history, command)).reason == reason  # type: ignore[arg-type]


def test_a_malfunction_from_the_log_voids_an_undecided_round_citing_it() -> None:
    malfunction = GAME.malfunction(source="wallet", reason="processing_failed: KeyError")
    [voided] = DEALER.run(DEALT_HISTORY, malfunction)

    assert isinstance(voided, RoundVoided)
    assert voided.malfunction_id == malfunction.event_id
    assert voided.reason == "wallet: processing_failed: KeyError"
    assert voided.causation_id == malfunction.event_id


def test_two_malfunctions_give_one_round_voided() -> None:
    state, first = DEALER.when(DEALER.given(DEALT_HISTORY), GAME.malfunction("m1"))
    state, second = DEALER.when(state, GAME.malfunction("m2"))

    assert types_of(first) == ["round.voided"] and second == []
    assert state.get("r1").phase is Phase.VOIDED  # type: ignore[union-attr]


@pytest.mark.parametrize("decision", ["call", "fold"])
def test_a_malfunction_for_a_decided_round_is_left_to_settlement(decision: str) -> None:
    assert DEALER.run(GAME.played(decision), GAME.malfunction()) == []


def test_a_malfunction_for_a_settled_round_changes_nothing() -> None:
    assert DEALER.run([*GAME.played(), settled()], GAME.malfunction()) == []


def test_a_round_that_broke_before_its_bet_arrived_is_voided_not_dealt() -> None:
    events = DEALER.run([GAME.malfunction()], GAME.bet_placed())

    assert types_of(events) == ["round.voided"]
    assert isinstance(events[0], RoundVoided)
    assert events[0].malfunction_id == GAME.malfunction().event_id


def test_a_call_on_a_round_whose_deck_is_missing_voids_it_instead_of_inventing_cards() -> None:
    events = DEALER.run([GAME.bet_placed(), GAME.dealt()], call())  # no DeckSealed in the vault

    assert types_of(events) == ["round.malfunction", "round.voided"]
    assert isinstance(events[0], Malfunction) and events[0].source == "dealer"


# --- forged settlements (the wallet refuses them; the dealer must not act on them either) ---


def test_a_settled_for_an_undecided_round_does_not_close_it() -> None:
    state = DEALER.given([*DEALT_HISTORY, settled()])
    events = DEALER.run([*DEALT_HISTORY, settled()], call())

    assert state.get("r1").phase is Phase.DEALT  # type: ignore[union-attr]
    assert types_of(events) == ["round.called"]


def test_the_wallets_refusal_of_a_settled_voids_nothing() -> None:
    refusal = GAME.malfunction(source="wallet", reason="settlement_mismatch: differs")

    assert DEALER.run(DEALT_HISTORY, refusal) == []
    assert types_of(DEALER.run([*DEALT_HISTORY, refusal], call())) == ["round.called"]
