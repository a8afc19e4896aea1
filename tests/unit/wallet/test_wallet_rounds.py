"""The money side of a round: capture, release, payout and refund, each once and only if due."""

from __future__ import annotations

from support.deciders import types_of
from support.wallet import (
    WALLET,
    balances,
    deposit,
    place_bet,
    round_events,
    settled,
    verified_settled,
    voided,
)

from holdem.core.contracts import (
    Call,
    Fold,
    Malfunction,
    Message,
    Mode,
    PayoutCredited,
    VoidRound,
)
from holdem.wallet.state import State

ROUND = round_events("r1")
HOUSE = ("EUR", Mode.REAL)


def bet_placed(ante: int = 1_000, aa_bonus: int = 500, funds: int = 10_000) -> State:
    """p1 deposited ``funds``, bet on r1 (10 000 - 1 500 stake - 2 000 hold) and was dealt."""
    state, _ = WALLET.when(WALLET.given([]), deposit(funds))
    state, _ = WALLET.when(state, place_bet("r1", ante=ante, aa_bonus=aa_bonus))
    state, _ = WALLET.when(state, ROUND.dealt())
    return state


WIN = verified_settled()  # the deck's call: 8 000 back (ante 2 000, call 2 000, bonus 4 000)
FOLD = verified_settled(decision="fold")


def refusal(events: list[Message]) -> Malfunction:
    [event] = events
    assert isinstance(event, Malfunction) and event.refuses_settled()
    return event


def after(state: State, *messages: Message) -> State:
    for message in messages:
        state, _ = WALLET.when(state, message)
    return state


def test_a_call_captures_the_held_amount() -> None:
    state, events = WALLET.when(bet_placed(), ROUND.called())

    assert types_of(events) == ["wallet.call_captured"]
    assert (events[0].idempotency_key, events[0].amount) == ("capture:r1", 2_000)
    assert (events[0].available, events[0].held) == (6_500, 0)
    assert balances(state) == (6_500, 0)
    assert state.house[HOUSE] == 3_500


def test_a_fold_releases_the_held_amount() -> None:
    state, events = WALLET.when(bet_placed(), ROUND.folded())

    assert types_of(events) == ["wallet.call_released"]
    assert events[0].idempotency_key == "release:r1"
    assert balances(state) == (8_500, 0)
    assert state.house[HOUSE] == 1_500


def test_a_settlement_that_verifies_credits_the_total_return() -> None:
    state, events = WALLET.when(after(bet_placed(), ROUND.called()), WIN)

    assert types_of(events) == ["wallet.payout_credited", "round.closed"]
    assert (events[0].idempotency_key, events[0].amount, events[0].available) == (
        "payout:r1",
        8_000,
        14_500,
    )
    assert state.house[HOUSE] == -4_500


def test_a_losing_settlement_moves_no_money_but_closes_the_round() -> None:
    _, events = WALLET.when(after(bet_placed(), ROUND.folded()), FOLD)

    assert [(type(e), e.amount, e.idempotency_key) for e in events[:1]] == [
        (PayoutCredited, 0, "payout:r1")
    ]
    assert types_of(events[1:]) == ["round.closed"]
    voided_after = WALLET.when(after(bet_placed(), ROUND.folded(), FOLD), voided())[1]
    assert voided_after == []


def test_a_forged_settlement_is_not_paid_but_refused_on_the_log() -> None:
    forged = settled(999_999_999, ante=1_000, aa_bonus=500, call=2_000, event_id="forged")
    state, events = WALLET.when(after(bet_placed(), ROUND.called()), forged)

    malfunction = refusal(events)
    assert malfunction.reason.startswith("settlement_mismatch: differs")
    assert (malfunction.causation_id, malfunction.source) == ("forged", "wallet")
    assert balances(state) == (6_500, 0)  # the call captured, nothing credited
    _, paid = WALLET.when(state, WIN)  # the genuine result is still paid once
    assert types_of(paid) == ["wallet.payout_credited", "round.closed"] and paid[0].amount == 8_000


def test_each_field_of_a_settlement_must_be_the_rules_result() -> None:
    base = after(bet_placed(), ROUND.called())
    for name, value in [
        ("ante_return", 2_001),
        ("bonus_return", 0),
        ("decision", "fold"),
        ("result", "lose"),
        ("pay_table", "generous-9"),
        ("currency", "USD"),
    ]:
        _, events = WALLET.when(base, WIN.model_copy(update={name: value}))
        assert name in refusal(events).reason, name


def test_a_settlement_before_a_reveal_that_verifies_is_refused() -> None:
    _, without_reveal = WALLET.when(bet_placed(), WIN)
    tampered = ROUND.called(deck=tuple(reversed(ROUND.called().deck)))
    _, bad_deck = WALLET.when(after(bet_placed(), tampered), WIN)

    assert "no revealed deck" in refusal(without_reveal).reason
    assert "no revealed deck" in refusal(bad_deck).reason


def test_a_forged_fold_moves_no_call() -> None:
    forged = ROUND.folded(deck=tuple(reversed(ROUND.folded().deck)), event_id="forged-fold")
    state, events = WALLET.when(bet_placed(), forged)
    _, captured = WALLET.when(state, ROUND.called())

    assert events == [] and types_of(captured) == ["wallet.call_captured"]


def test_a_settlement_for_a_round_with_no_open_stake_is_refused_as_a_duplicate() -> None:
    paid = after(bet_placed(), ROUND.called(), WIN)
    for state, message in [
        (bet_placed(), settled(7_000, round_id="r-unknown")),
        (bet_placed(), settled(7_000, player_id="p2")),
        (paid, WIN.model_copy(update={"event_id": "second-settled"})),
        (after(bet_placed(), ROUND.called(), voided()), WIN),
    ]:
        _, events = WALLET.when(state, message)
        assert refusal(events).reason.startswith("settlement_duplicate"), message.event_id


def test_the_settlement_it_paid_delivered_again_is_silent() -> None:
    _, events = WALLET.when(after(bet_placed(), ROUND.called(), WIN), WIN)

    assert events == []


def test_a_void_before_the_decision_refunds_the_stakes_and_releases_the_call() -> None:
    state, events = WALLET.when(bet_placed(), voided())

    assert types_of(events) == ["wallet.call_released", "wallet.stakes_refunded", "round.closed"]
    assert (events[1].idempotency_key, events[1].amount) == ("refund:r1", 1_500)
    assert balances(state) == (10_000, 0)
    assert state.house[HOUSE] == 0


def test_a_void_after_the_call_was_captured_refunds_the_call_too() -> None:
    state, events = WALLET.when(after(bet_placed(), ROUND.called()), voided())

    assert types_of(events) == ["wallet.stakes_refunded", "round.closed"]
    assert events[0].amount == 3_500
    assert balances(state) == (10_000, 0)
    assert state.house[HOUSE] == 0


def test_a_void_after_a_fold_refunds_ante_and_bonus() -> None:
    state, events = WALLET.when(after(bet_placed(), ROUND.folded()), voided())

    assert types_of(events) == ["wallet.stakes_refunded", "round.closed"]
    assert events[0].amount == 1_500
    assert balances(state) == (10_000, 0)


def test_a_void_after_the_payout_does_nothing() -> None:
    state = after(bet_placed(), ROUND.called(), WIN)
    _, events = WALLET.when(state, voided())

    assert events == []


def test_every_round_event_delivered_twice_acts_only_once() -> None:
    for second_time in (ROUND.called(), ROUND.folded(), WIN, voided()):
        state = after(bet_placed(), ROUND.called(), WIN, voided())
        _, events = WALLET.when(state, second_time)
        assert events == [], second_time.type


def test_a_duplicated_void_refunds_once() -> None:
    state, first = WALLET.when(bet_placed(), voided())
    _, again = WALLET.when(state, voided(event_id="another-void-event"))

    assert first and again == []


def test_round_events_the_wallet_has_no_part_in_are_ignored() -> None:
    for message in (ROUND.bet_placed(), ROUND.dealt(), ROUND.malfunction()):
        _, events = WALLET.when(bet_placed(), message)
        assert events == [], message.type


def test_the_dealers_commands_are_ignored() -> None:
    for model in (Call, Fold, VoidRound):
        command = model(
            event_id="e1", command_id="c1", player_id="p1", round_id="r1", occurred_at=ROUND.at
        )
        _, events = WALLET.when(bet_placed(), command)
        assert events == [], model.__name__


def test_the_ledger_folds_each_idempotency_key_once() -> None:
    state, events = WALLET.when(bet_placed(), ROUND.called())
    refolded = WALLET.evolve(state, events[0])

    assert refolded.house[HOUSE] == 3_500
    assert balances(refolded) == (6_500, 0)


def test_a_round_whose_settlement_was_refused_is_refunded_by_its_void() -> None:
    wrong = WIN.model_copy(update={"bonus_return": 0, "total_return": 4_000})
    state, refused = WALLET.when(after(bet_placed(), ROUND.called()), wrong)
    state, events = WALLET.when(state, voided(malfunction_id=refusal(refused).event_id))

    assert types_of(events) == ["wallet.stakes_refunded", "round.closed"]
    assert events[0].amount == 3_500
    assert balances(state) == (10_000, 0) and state.house[HOUSE] == 0
