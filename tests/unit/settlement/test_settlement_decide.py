"""Settlement's decide: one Settled or RoundVoided per decided round, computed by the core rules."""

from __future__ import annotations

from dataclasses import replace

from support.deciders import context_for, types_of
from support.rounds import RoundEvents, deck_for
from support.settlement import SETTLEMENT, round_of

from holdem.core.cards import parse_cards
from holdem.core.contracts import CommandRejected, Malfunction, Reason, RoundVoided, Settled
from holdem.core.rules import settle
from holdem.settlement.decide import decide
from holdem.settlement.state import evolve

ROUND = RoundEvents()  # As Ad vs 7c 2d on Ah Ks 9d 4c 3h: three aces, dealer does not qualify


def test_a_called_round_is_settled_once_with_the_returns_of_the_rules() -> None:
    events = SETTLEMENT.run(ROUND.played()[:-1], ROUND.called())

    assert types_of(events) == ["round.settled"]
    settled = events[0]
    assert isinstance(settled, Settled)
    # ante 10 pays 1 to 1, call 20 pushes, AA bonus 5 pays 7 to 1 on three aces
    assert (settled.result, settled.dealer_qualifies) == ("win", False)
    assert (settled.ante_return, settled.call_return, settled.bonus_return) == (20, 20, 40)
    assert (settled.total_return, settled.call, settled.decision) == (80, 20, "call")
    assert (settled.player_category, settled.bonus_class) == ("three_of_a_kind", "aces_to_straight")
    assert (settled.round_id, settled.player_id, settled.causation_id) == (
        "r1",
        "p1",
        ROUND.called().event_id,
    )


def test_settled_returns_equal_the_core_settle_function_for_a_dealer_win() -> None:
    round_ = RoundEvents(deck=deck_for("7h2c", "KsKd", "Kh9d4c3s8h"), ante=25, aa_bonus=0)
    [settled] = SETTLEMENT.run(round_.played()[:-1], round_.called())

    cards = parse_cards("7h2c KsKd Kh9d4c3s8h")
    expected = settle(cards[:2], cards[2:4], cards[4:], 25, 0, "call")
    assert isinstance(settled, Settled)
    assert settled.result == "lose" == expected.result
    assert settled.total_return == 0 == expected.total_return
    assert settled.dealer_category == "three_of_a_kind"


def test_a_folded_round_loses_ante_and_bonus_even_a_winning_bonus() -> None:
    [settled] = SETTLEMENT.run(ROUND.played()[:-1], ROUND.folded())

    assert isinstance(settled, Settled)
    assert (settled.decision, settled.result, settled.call) == ("fold", "fold", 0)
    assert settled.total_return == settled.bonus_return == 0
    assert settled.bonus_class == "aces_to_straight"


def test_a_redelivered_decision_yields_nothing() -> None:
    state, first = SETTLEMENT.when(SETTLEMENT.given(ROUND.played()[:-1]), ROUND.called())
    _, again = SETTLEMENT.when(state, ROUND.called())

    assert types_of(first) == ["round.settled"]
    assert again == []


def test_a_second_decision_event_for_a_settled_round_yields_nothing() -> None:
    state, _ = SETTLEMENT.when(SETTLEMENT.given(ROUND.played()[:-1]), ROUND.called())
    _, events = SETTLEMENT.when(state, ROUND.folded())

    assert events == []


def test_the_same_input_decided_twice_gives_the_same_event_ids() -> None:
    state = SETTLEMENT.given(ROUND.played())
    first = decide(state, ROUND.called(), context_for(ROUND.called()))
    second = decide(state, ROUND.called(), context_for(ROUND.called()))

    assert len(first) == 1
    assert [e.event_id for e in first] == [e.event_id for e in second]


def test_a_decision_after_a_known_malfunction_voids_the_round_instead_of_settling_it() -> None:
    history = [ROUND.bet_placed(), ROUND.dealt(), ROUND.malfunction("m1")]
    events = SETTLEMENT.run(history, ROUND.called())

    assert types_of(events) == ["round.voided"]
    assert isinstance(events[0], RoundVoided)
    assert events[0].malfunction_id == ROUND.malfunction("m1").event_id
    assert "stuck round" in events[0].reason


def test_a_malfunction_for_a_decided_unsettled_round_voids_it() -> None:
    # The decision was folded (e.g. replayed) but settling it failed: the runtime's Malfunction
    # for that round must end it.
    events = SETTLEMENT.run(ROUND.played(), ROUND.malfunction("m2"))

    assert types_of(events) == ["round.voided"]
    assert events[0].malfunction_id == ROUND.malfunction("m2").event_id


def test_a_malfunction_for_an_undecided_round_is_left_to_the_dealer() -> None:
    assert SETTLEMENT.run([ROUND.bet_placed(), ROUND.dealt()], ROUND.malfunction()) == []
    assert SETTLEMENT.run([ROUND.bet_placed()], ROUND.malfunction()) == []
    assert SETTLEMENT.run([], ROUND.malfunction()) == []


def test_a_malfunction_after_settlement_changes_nothing() -> None:
    state, _ = SETTLEMENT.when(SETTLEMENT.given(ROUND.played()[:-1]), ROUND.called())
    _, events = SETTLEMENT.when(state, ROUND.malfunction())

    assert events == []
    assert round_of(state, "p1", "r1").status == "settled"


def test_a_second_malfunction_after_a_void_changes_nothing() -> None:
    state, first = SETTLEMENT.when(SETTLEMENT.given(ROUND.played()), ROUND.malfunction("m1"))
    _, second = SETTLEMENT.when(state, ROUND.malfunction("m2"))
    _, redelivered = SETTLEMENT.when(state, ROUND.malfunction("m1"))

    assert types_of(first) == ["round.voided"]
    assert second == redelivered == []


def test_settlement_ignores_its_own_events_coming_back_from_the_log() -> None:
    state, [settled] = SETTLEMENT.when(SETTLEMENT.given(ROUND.played()[:-1]), ROUND.called())

    assert SETTLEMENT.when(state, settled)[1] == []


def test_a_deck_that_does_not_verify_against_the_commitment_is_voided_never_settled() -> None:
    swapped = list(ROUND.deck)
    swapped[20], swapped[30] = swapped[30], swapped[20]  # same nine dealt cards, other deck
    tampered = ROUND.called(deck=tuple(map(str, swapped)))
    events = SETTLEMENT.run(ROUND.played()[:-1], tampered)

    assert types_of(events) == ["round.malfunction", "round.voided"]
    malfunction, voided = events
    assert isinstance(malfunction, Malfunction) and isinstance(voided, RoundVoided)
    assert malfunction.source == "settlement"
    assert voided.malfunction_id == malfunction.event_id
    assert "deck does not verify" in voided.reason
    assert "commitment" in voided.reason


def test_a_wrong_salt_is_voided() -> None:
    events = SETTLEMENT.run(ROUND.played()[:-1], ROUND.called(salt="ab" * 32))

    assert types_of(events) == ["round.malfunction", "round.voided"]
    assert "deck does not verify" in events[1].reason


def test_revealed_cards_that_are_not_the_decks_deal_are_voided() -> None:
    wrong_order = ROUND.called(dealer_cards=(ROUND.called().turn, "2d"), turn="7c")
    events = SETTLEMENT.run(ROUND.played()[:-1], wrong_order)

    assert types_of(events) == ["round.malfunction", "round.voided"]
    assert "cards not dealt in the deck's order: dealer cards, turn" in events[1].reason


def test_a_dealt_whose_player_cards_are_not_the_decks_is_voided() -> None:
    history = [ROUND.bet_placed(), ROUND.dealt(player_cards=("Ad", "As"))]
    events = SETTLEMENT.run(history, ROUND.called())

    assert "cards not dealt in the deck's order: player cards" in events[-1].reason


def test_a_decision_without_a_bet_placed_is_voided() -> None:
    events = SETTLEMENT.run([ROUND.dealt()], ROUND.called())

    assert types_of(events) == ["round.malfunction", "round.voided"]
    assert "no BetPlaced" in events[1].reason


def test_stakes_that_differ_between_bet_placed_and_dealt_are_voided() -> None:
    history = [ROUND.bet_placed(), ROUND.dealt(ante=100)]
    events = SETTLEMENT.run(history, ROUND.called())

    assert "stakes" in events[-1].reason


def test_a_round_the_rules_cannot_settle_is_voided_with_the_rules_reason() -> None:
    free = RoundEvents(ante=0, aa_bonus=0)  # the rules refuse a zero ante
    events = SETTLEMENT.run(free.played()[:-1], free.called())

    assert types_of(events) == ["round.malfunction", "round.voided"]
    assert events[1].reason.startswith("malfunction from settlement: cannot settle: ")


def test_rounds_with_the_same_id_of_two_players_are_settled_independently() -> None:
    other = replace(ROUND, player_id="p2")
    state, [first] = SETTLEMENT.when(SETTLEMENT.given(ROUND.played()[:-1]), ROUND.called())
    for event in other.played()[:-1]:
        state = evolve(state, event)
    _, [second] = SETTLEMENT.when(state, other.called())

    assert (first.player_id, second.player_id) == ("p1", "p2")
    assert types_of([first, second]) == ["round.settled", "round.settled"]


def test_an_operators_void_that_loses_the_race_with_settlement_is_refused_round_closed() -> None:
    """Issue 29 defect 3: the dealer turns a VoidRound for a decided round into a Malfunction
    (settlement owns the round); when settlement had settled it already, the void gets one
    answer the operator can act on: round_closed, naming its command_id."""
    void = Malfunction(
        **ROUND.envelope("void", 9), source="operator", reason="operator: screen froze",
        command_id="v-1",
    )  # fmt: skip
    state = SETTLEMENT.given(ROUND.played()[:-1])
    state, [settled] = SETTLEMENT.when(state, ROUND.called())

    _, events = SETTLEMENT.when(state, void)

    [refused] = events
    assert isinstance(settled, Settled) and isinstance(refused, CommandRejected)
    assert (refused.reason, refused.command_id) == (Reason.ROUND_CLOSED, "v-1")
    assert (refused.command_type, refused.round_id) == ("command.void_round", "r1")
    assert "settled" in refused.detail


def test_an_operators_void_of_a_decided_round_not_yet_settled_voids_it() -> None:
    void = Malfunction(
        **ROUND.envelope("void", 9), source="operator", reason="operator", command_id="v-1"
    )
    state = SETTLEMENT.given([*ROUND.played()[:-1], void])

    assert types_of(SETTLEMENT.run(ROUND.played()[:-1], void)) == []  # undecided: the dealer's
    assert types_of(SETTLEMENT.when(state, ROUND.called())[1]) == ["round.voided"]
