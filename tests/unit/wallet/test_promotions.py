"""Promotions in the wallet's decider (ADR 029): promotional credits, free-hand campaigns
granted, played, cancelled and expired, each paying what the ADR says, the audit clean."""

from __future__ import annotations

from datetime import timedelta

import pytest
from support.deciders import NOW, Decider
from support.promotions import Promoted, cancel, credit_promo, grant, play
from support.rounds import RoundEvents, deck_for
from support.seamless import DECIDE, TIMING, Bridged, settled_for
from support.tables import table_event
from support.wallet import TABLE, deposit

from holdem.core.contracts import (
    BetPlaced,
    CallCaptured,
    CallHeld,
    CallReleased,
    FreeHandsCancelled,
    FreeHandsExpired,
    FreeHandsGranted,
    FreeStakeRefunded,
    FreeStakeTaken,
    PayoutCredited,
    PromoCredited,
    PromoReason,
    PromoRejected,
    Reason,
    RoundVoided,
    StakesRefunded,
    TableOpened,
)
from holdem.core.contracts.seamless import CreditRequested, DebitRequested, RollbackRequested
from holdem.core.table_book import TableBook
from holdem.wallet import snapshot
from holdem.wallet.admission import Tables
from holdem.wallet.seamless import bind_seamless, evolve_seamless
from holdem.wallet.state import State, initial_state

ANTE, BONUS = 1_000, 500
# Player AsAd, dealer 7c2d, board AhKs9d4c3h: three aces (ante 1 to 1; the bonus 7 to 1), the
# dealer does not qualify (the call pushes).
WIN = deck_for("AsAd", "7c2d", "AhKs9d4c3h")
# Player 7h2c against the dealer's pair of kings: ante and call lost, the bonus loses.
LOSE = deck_for("7h2c", "KcKd", "Qs9h5d4c3s")
# Both play the board's straight: a tie (ante and call push), the bonus loses (7h 2c + flop).
TIE = deck_for("7h2c", "8d3c", "AsKdQhJcTs")


def reasons(events: list[object]) -> list[object]:
    return [e.reason for e in events if isinstance(e, PromoRejected)]


def funded(amount: int = 100_000) -> Promoted:
    p = Promoted()
    if amount:
        p.send(deposit(amount, command_id="d1"))
    return p


def available(p: Promoted) -> int:
    return p.state.account(("p1", "EUR", "real")).available  # type: ignore[arg-type]


def test_a_promotional_credit_is_paid_once_with_its_campaign_and_reason() -> None:
    p = funded(0)
    credit = credit_promo(2_500, command_id="k1", campaign_id="sorry-42", reason="outage")

    [first] = p.send(credit)
    again = p.send(credit.model_copy(update={"event_id": "resent"}))

    assert isinstance(first, PromoCredited) and again == []
    assert (first.amount, first.available, first.campaign_id, first.reason) == (
        2_500,
        2_500,
        "sorry-42",
        "outage",
    )
    assert first.idempotency_key == "promo:k1" and first.round_id is None
    assert available(p) == 2_500 and p.state.promo[("EUR", "real")] == -2_500
    assert p.audit() == []


def test_a_promotional_credit_reusing_a_command_id_for_another_body_is_a_duplicate() -> None:
    p = funded(0)
    p.send(credit_promo(2_500, command_id="k1"))

    events = p.send(credit_promo(9_999, command_id="k1"))

    assert reasons(events) == [Reason.DUPLICATE] and available(p) == 2_500
    assert p.audit() == []


def test_a_grant_is_checked_against_its_table_and_the_players_campaigns() -> None:
    p = funded()
    p.send(grant(campaign_id="c1"))

    refused = [
        *p.send(grant(campaign_id="c1")),  # the same campaign id, another command
        *p.send(grant(campaign_id="c2", table_id="nope")),
        *p.send(grant(campaign_id="c3", ante=1_050)),  # not a sum of the chips
        *p.send(grant(campaign_id="c4", ante=20_000)),  # above the table maximum
        *p.send(grant(campaign_id="c5", expires_at=NOW)),
    ]

    assert reasons(refused) == [
        PromoReason.CAMPAIGN_EXISTS,
        Reason.UNKNOWN_TABLE,
        Reason.NOT_CHIPS,
        Reason.INVALID,
        Reason.INVALID,
    ]
    assert list(p.state.campaigns["p1"]) == ["c1"]


def test_absurd_counts_and_amounts_do_not_parse() -> None:
    for bad in ({"hands": 0}, {"hands": 1_001}, {"hands": -5}, {"ante": -1}, {"ante": 10**13}):
        with pytest.raises(ValueError):
            grant(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        credit_promo(0)
    with pytest.raises(ValueError):
        credit_promo(-100)


def test_a_free_hand_takes_no_ante_and_holds_the_players_call() -> None:
    p = funded(10_000)
    p.send(grant(hands=5))

    placed, stake, hold = p.send(play("r1"))

    assert isinstance(placed, BetPlaced) and isinstance(stake, FreeStakeTaken)
    assert isinstance(hold, CallHeld)
    assert (placed.ante, placed.aa_bonus, placed.call_hold, placed.table_id) == (
        ANTE,
        BONUS,
        2 * ANTE,
        "t1",
    )
    assert (stake.amount, stake.available, stake.held, stake.campaign_id) == (
        ANTE + BONUS,
        10_000,
        0,
        "c1",
    )
    assert (hold.amount, hold.available, hold.held, hold.campaign_id) == (2_000, 8_000, 2_000, "c1")
    assert p.state.campaigns["p1"]["c1"].remaining == 4


def test_five_free_hands_pay_their_winnings_only_and_the_call_in_full() -> None:
    p = funded(10_000)
    p.send(grant(hands=5))
    paid = []
    for number, (deck, decision) in enumerate(
        [(WIN, "call"), (LOSE, "call"), (TIE, "call"), (WIN, "fold"), (WIN, "call")], 1
    ):
        p.send(play(f"r{number}"))
        answers = p.finish(f"r{number}", deck, decision)  # type: ignore[arg-type]
        [payout] = [e for e in answers if isinstance(e, PayoutCredited)]
        assert payout.campaign_id == "c1"
        paid.append(payout.amount)

    # WIN called: ante 2 000 back, 1 000 of it won; bonus 4 000 back, 3 500 won; call pushed 2 000
    # LOSE: nothing. TIE: ante push (the free stake is not returned), call push 2 000.
    # WIN folded: nothing (the fold loses ante and bonus; the call hold was released).
    assert paid == [6_500, 0, 2_000, 0, 6_500]
    # the player's own money moved by the call only: +4 500, -2 000, 0, 0, +4 500
    assert available(p) == 10_000 + 4_500 - 2_000 + 4_500
    assert p.state.promo[("EUR", "real")] == -5 * (ANTE + BONUS)
    assert p.state.campaigns["p1"]["c1"].remaining == 0
    assert reasons(p.send(play("r6"))) == [PromoReason.NO_FREE_HANDS]
    assert p.audit() == []


def test_every_movement_of_a_free_hand_names_its_campaign() -> None:
    p = funded(10_000)
    p.send(grant(hands=2))
    p.send(play("r1"))
    p.finish("r1", WIN, "call")
    p.send(play("r2"))
    p.finish("r2", WIN, "fold")

    moves = [e for e in p.log if isinstance(e, FreeStakeTaken | CallHeld | PayoutCredited)]
    moves += [e for e in p.log if isinstance(e, CallCaptured | CallReleased)]
    assert len(moves) == 2 * 4 and {m.campaign_id for m in moves} == {"c1"}


def test_a_cancelled_campaign_finishes_the_hand_in_play_and_refuses_the_next() -> None:
    p = funded(10_000)
    p.send(grant(hands=5))
    p.send(play("r1"))
    p.finish("r1", LOSE)
    p.send(play("r2"))

    [cancelled] = p.send(cancel(command_id="x1"))
    resent = p.send(cancel(command_id="x1"))
    answers = p.finish("r2", WIN)
    refused = p.send(play("r3"))

    assert isinstance(cancelled, FreeHandsCancelled) and cancelled.remaining == 3
    assert resent == []
    assert [e.amount for e in answers if isinstance(e, PayoutCredited)] == [6_500]
    assert reasons(refused) == [PromoReason.CAMPAIGN_CANCELLED]
    assert reasons(p.send(cancel())) == [PromoReason.CAMPAIGN_CANCELLED]
    assert available(p) == 10_000 - 2_000 + 4_500 and p.state.promo[("EUR", "real")] == -3_000
    assert p.audit() == []


def test_a_campaign_expires_on_the_tick_after_its_expiry_once() -> None:
    p = funded(10_000)
    expires = NOW + timedelta(hours=1)
    p.send(grant(hands=5, expires_at=expires))
    p.send(play("r1"))
    p.finish("r1", WIN)

    before = p.tick(expires - timedelta(seconds=1))
    late = p.send(play("r2", at=expires), expires)  # before the tick saw it: still refused
    [expired] = p.tick(expires)
    again = p.tick(expires + timedelta(seconds=1))

    assert before == [] and again == []
    assert reasons(late) == [PromoReason.CAMPAIGN_EXPIRED]
    assert isinstance(expired, FreeHandsExpired) and expired.remaining == 4
    assert p.state.campaigns["p1"]["c1"].status == "expired"
    assert reasons(p.send(play("r3", at=expires), expires)) == [PromoReason.CAMPAIGN_EXPIRED]
    assert available(p) == 10_000 + 4_500
    assert p.audit() == []


def test_a_voided_free_hand_gives_its_stake_back_to_the_promotion_and_the_hand_back() -> None:
    p = funded(10_000)
    p.send(grant(hands=1))
    p.send(play("r1"))
    game = RoundEvents(round_id="r1")
    p.send(game.dealt(ante=ANTE, aa_bonus=BONUS), fold=True)
    p.send(game.called(), fold=True)

    void = RoundVoided(**game.envelope("voided", 4), malfunction_id="m1", reason="malfunction")
    answers = p.send(void, fold=True)

    [back] = [e for e in answers if isinstance(e, FreeStakeRefunded)]
    [refund] = [e for e in answers if isinstance(e, StakesRefunded)]
    assert (back.amount, back.campaign_id) == (ANTE + BONUS, "c1")
    assert (refund.amount, refund.available) == (2 * ANTE, 10_000)  # the captured call
    assert p.state.promo[("EUR", "real")] == 0
    assert p.state.campaigns["p1"]["c1"].remaining == 1
    assert p.audit() == []


def test_a_free_hand_needs_the_call_and_a_free_seat() -> None:
    p = funded(1_999)
    p.send(grant(hands=5))
    assert reasons(p.send(play("r1"))) == [Reason.INSUFFICIENT_FUNDS]
    p.send(deposit(1, command_id="d2"))
    p.send(play("r1"))

    refused = [*p.send(play("r2")), *p.send(play("r1")), *p.send(play("r3", campaign_id="zz"))]

    assert reasons(refused) == [
        Reason.ROUND_IN_PROGRESS,
        Reason.ROUND_EXISTS,  # a new command for a round that already has its bet
        PromoReason.UNKNOWN_CAMPAIGN,
    ]
    assert [e.round_id for e in refused] == ["r2", "r1", "r3"]


def test_the_audit_sees_a_free_hand_paid_as_if_it_were_the_players_stake() -> None:
    p = funded(10_000)
    p.send(grant(hands=1))
    p.send(play("r1"))
    p.finish("r1", WIN)
    payout = next(e for e in p.log if isinstance(e, PayoutCredited))
    forged = payout.model_copy(update={"amount": 8_000, "available": payout.available + 1_500})
    p.log[p.log.index(payout)] = forged
    p.state.accounts[("p1", "EUR", "real")].available += 1_500  # type: ignore[index]

    assert any("Settled total 8000 but paid [8000]" in v for v in p.audit())


def test_campaigns_and_the_promotion_account_survive_a_snapshot() -> None:
    p = funded(10_000)
    p.send(grant(hands=3))
    p.send(credit_promo(700))
    p.send(play("r1"))

    restored = snapshot.load_state(snapshot.dump_state(p.state))

    assert restored == p.state
    assert restored.rounds["r1"].campaign_id == "c1"
    assert restored.campaigns["p1"]["c1"].remaining == 2
    assert isinstance(next(e for e in p.log if isinstance(e, FreeHandsGranted)), FreeHandsGranted)


def test_the_seamless_wallet_refuses_promotional_credits_once_per_command() -> None:
    seamless = Decider[State](initial_state, evolve_seamless, DECIDE)
    credit = credit_promo(500, command_id="k1")

    state, events = seamless.when(seamless.initial_state(), credit, fold_input=False)
    state, resent = seamless.when(state, credit, fold_input=False)

    assert reasons(events) == [PromoReason.NOT_SUPPORTED]
    assert resent == [] and not state.promo


def seamless_at_table() -> Bridged:
    book = TableBook()
    book.evolve(table_event(TableOpened, 1))
    bridged = Bridged(decide=bind_seamless(Tables(TABLE, book), TIMING))
    bridged.fund("p1", 10_000)
    bridged.handle(grant(hands=2))
    return bridged


def test_a_seamless_free_hand_debits_the_call_alone_and_credits_the_winnings() -> None:
    b = seamless_at_table()

    [debit] = b.handle(play("r1"))
    placed = b.deliver()
    game = RoundEvents(round_id="r1", ante=ANTE, aa_bonus=BONUS)
    b.play(game)
    b.deliver()

    assert isinstance(debit, DebitRequested)
    assert (debit.amount, debit.call_hold, debit.campaign_id) == (2 * ANTE, 2 * ANTE, "c1")
    assert [type(e).__name__ for e in placed] == [
        "SeamlessDebited",
        "BetPlaced",
        "FreeStakeTaken",
        "CallHeld",
    ]
    [credit] = b.of(CreditRequested)
    assert (credit.amount, credit.campaign_id) == (6_500, "c1")  # winnings 4 500 + the call
    # the operator's books: 10 000 - 2 000 (the call) + 6 500
    assert b.operator.wallet.balance("p1", "EUR") == 14_500
    assert b.state.campaigns["p1"]["c1"].remaining == 1
    assert b.violations() == []
    rounds = [game.dealt(), game.called(), settled_for(game, "call")]
    assert Promoted(log=[table_event(TableOpened, 1), *b.published, *rounds]).audit() == []


def test_a_voided_seamless_free_hand_rolls_the_call_back_and_gives_the_hand_back() -> None:
    b = seamless_at_table()
    b.handle(play("r1"))
    b.deliver()

    b.void("r1")
    b.deliver()

    [rollback] = b.of(RollbackRequested)
    assert (rollback.amount, rollback.campaign_id) == (2 * ANTE, "c1")
    assert b.operator.wallet.balance("p1", "EUR") == 10_000
    assert b.state.campaigns["p1"]["c1"].remaining == 2
    assert b.violations() == []


def test_a_seamless_free_hand_the_operator_refuses_starts_no_round() -> None:
    b = seamless_at_table()
    b.fund("p1", 1_999)  # less than the call

    b.handle(play("r1", command_id="f1"))
    refused = b.deliver()
    resent = b.handle(play("r1", command_id="f1"))

    assert [e.type for e in refused] == ["round.bet_rejected", "wallet.rejected"]
    assert refused[0].reason is Reason.INSUFFICIENT_FUNDS and resent == []
    assert b.state.campaigns["p1"]["c1"].remaining == 2 and not b.of(FreeStakeTaken)
