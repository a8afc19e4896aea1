"""Player protection (ADR 028) meets promotions (ADR 029) and forced decks (ADR 030): a blocked
player plays no free hand (in transfer and seamless mode), the limits count a free hand's call
only (his own money), a free hand's round.closed is written once after its last movement with
the player's own stake, and a forced-deck round closes like any; the audit (money with the
promotion account, round closed, forced decks) passes on each."""

from __future__ import annotations

import uuid
from typing import Any

from support.deciders import NOW
from support.promotions import Promoted, grant, play
from support.rounds import RoundEvents
from support.seamless import TIMING, Bridged
from support.tables import table_event
from support.wallet import (
    TABLE,
    WALLET,
    grant_fun,
    place_bet,
    round_events,
    verified_settled,
    voided,
)

from holdem.core.contracts import (
    BlockPlayer,
    CallCaptured,
    LimitKind,
    Mode,
    OperatorRefusal,
    PayoutCredited,
    PromoRejected,
    ProtectionRefusal,
    RoundClosed,
    SetLimits,
    StakesRefunded,
    TableOpened,
    UnblockPlayer,
)
from holdem.core.contracts.promotions import FreeStakeRefunded, FreeStakeTaken
from holdem.core.contracts.protection import Limits
from holdem.core.contracts.seamless import DebitRequested, RoundClosedNotice
from holdem.core.table_book import TableBook
from holdem.wallet.admission import Tables
from holdem.wallet.seamless import bind_seamless
from holdem.wallet.state import initial_state

ANTE, BONUS = 1_000, 500  # the grant's hand: the call is 2 000, the player's own
CALL = 2 * ANTE


def operator(model: type[Any], **fields: Any) -> Any:
    return model(
        event_id=uuid.uuid4().hex,
        command_id=uuid.uuid4().hex,
        player_id="p1",
        occurred_at=NOW,
        **fields,
    )


def promoted(**limits: Any) -> Promoted:
    """p1 with 100 000 EUR of his own and a campaign of 3 hands (ante 1 000, bonus 500)."""
    from support.wallet import deposit

    seat = Promoted()
    seat.send(deposit(100_000))
    seat.send(grant(hands=3, ante=ANTE, aa_bonus=BONUS))
    if limits:
        seat.send(operator(SetLimits, limits=Limits(currency="EUR", **limits)))
    return seat


def closes(events: list[Any]) -> list[RoundClosed]:
    return [e for e in events if isinstance(e, RoundClosed)]


def test_a_blocked_player_plays_no_free_hand_and_an_unblocked_one_does() -> None:
    seat = promoted()
    seat.send(operator(BlockPlayer, reason="self-exclusion"), fold=False)
    before = seat.state.campaign("p1", "c1")
    assert before is not None and before.played == 0

    (refused,) = seat.send(play("free-1"))

    assert isinstance(refused, PromoRejected) and refused.version == 2
    assert refused.reason is OperatorRefusal.PLAYER_BLOCKED and refused.round_id == "free-1"
    assert seat.state.campaign("p1", "c1").played == 0  # type: ignore[union-attr]
    assert "free-1" not in seat.state.rounds
    seat.send(operator(UnblockPlayer))
    assert any(isinstance(e, FreeStakeTaken) for e in seat.send(play("free-2")))
    seat.finish("free-2")
    assert seat.audit() == []


def test_the_limits_count_a_free_hands_call_only() -> None:
    # The call, 2 000, fits a wager limit of 2 000; ante + bonus + call (3 500) would not.
    seat = promoted(wager_per_day=CALL, loss_per_day=CALL)

    placed = seat.send(play("free-1"))

    assert any(isinstance(e, FreeStakeTaken) for e in placed)
    seat.finish("free-1")  # called: the call is wagered
    day = seat.state.protection.day("p1", "EUR", NOW)
    assert day.wagered == CALL  # not the promotion's ante and bonus
    (refused,) = seat.send(play("free-2"))
    assert isinstance(refused, PromoRejected)
    assert refused.reason is ProtectionRefusal.LIMIT_REACHED
    assert refused.limit is LimitKind.WAGER_PER_DAY
    assert seat.audit() == []


def test_a_free_hand_under_a_limit_too_small_for_its_call_is_refused_with_the_limit() -> None:
    seat = promoted(wager_per_day=CALL - 1)

    (refused,) = seat.send(play("free-1"))

    assert isinstance(refused, PromoRejected) and refused.limit is LimitKind.WAGER_PER_DAY
    assert not seat.state.rounds


def test_a_free_hand_closes_once_after_its_payout_with_the_players_own_stake() -> None:
    seat = promoted()
    assert not closes(seat.send(play("free-1")))

    answers = seat.finish("free-1")

    (closed,) = closes(answers)
    assert answers[-1] is closed  # after the round's last movement
    payout = next(e for e in answers if isinstance(e, PayoutCredited))
    assert closed.outcome == "settled" and closed.staked == CALL  # the captured call
    assert closed.returned == payout.amount
    assert any(isinstance(e, CallCaptured) for e in answers)
    assert len(closes(seat.log)) == 1
    assert seat.audit() == []
    settled = next(e for e in seat.log if e.type == "round.settled")
    _, again = seat.wallet.when(seat.state, settled, NOW)
    assert not closes(again)  # its Settled again closes nothing


def test_a_voided_free_hand_closes_once_after_its_refunds() -> None:
    seat = promoted()
    seat.send(play("free-1"))

    answers = seat.send(voided("free-1"), fold=True)

    kinds = [type(e) for e in answers]
    assert kinds.index(FreeStakeRefunded) < kinds.index(StakesRefunded) < kinds.index(RoundClosed)
    (closed,) = closes(answers)
    assert (closed.outcome, closed.staked, closed.returned) == ("voided", 0, 0)
    assert seat.audit() == []
    _, again = seat.wallet.when(seat.state, voided("free-1"), NOW)
    assert not closes(again)


def test_a_forced_deck_round_closes_like_any() -> None:
    game = round_events("r1")
    state = initial_state()
    state, _ = WALLET.when(state, grant_fun(100_000))
    state, _ = WALLET.when(state, place_bet(ante=1_000, aa_bonus=500, mode=Mode.FUN))
    state, _ = WALLET.when(state, game.dealt(forced=True))
    state, _ = WALLET.when(state, game.called(forced=True))

    state, answers = WALLET.when(state, verified_settled(mode=Mode.FUN))

    (closed,) = closes(answers)
    payout = next(e for e in answers if isinstance(e, PayoutCredited))
    assert closed.mode is Mode.FUN and closed.outcome == "settled"
    assert closed.staked == 1_000 + 500 + CALL and closed.returned == payout.amount


def seamless_at_table() -> Bridged:
    book = TableBook()
    book.evolve(table_event(TableOpened, 1))
    bridged = Bridged(decide=bind_seamless(Tables(TABLE, book), TIMING))
    bridged.fund("p1", 10_000)
    bridged.handle(grant(hands=2, ante=ANTE, aa_bonus=BONUS))
    return bridged


def test_a_blocked_player_plays_no_seamless_free_hand_and_asks_no_debit() -> None:
    b = seamless_at_table()
    b.handle(operator(BlockPlayer, reason="self-exclusion"))

    (refused,) = b.handle(play("r1"))

    assert isinstance(refused, PromoRejected)
    assert refused.reason is OperatorRefusal.PLAYER_BLOCKED
    assert not b.of(DebitRequested) and b.state.campaigns["p1"]["c1"].remaining == 2


def test_a_seamless_free_hand_closes_once_after_the_operators_last_answer() -> None:
    b = seamless_at_table()
    b.handle(play("r1"))
    b.deliver()
    game = RoundEvents(round_id="r1", ante=ANTE, aa_bonus=BONUS)

    b.play(game)
    b.deliver()
    b.deliver()

    (closed,) = b.of(RoundClosed)
    assert closed.outcome == "settled" and closed.staked == CALL
    assert len(b.of(RoundClosedNotice)) == 1  # to the operator, once
    assert b.violations() == []
