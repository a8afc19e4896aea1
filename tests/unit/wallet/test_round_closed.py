"""Round closed (ADR 028): one round.closed per round that took a stake, after its last money
movement, in transfer mode with the payout or refund, in seamless mode once the operator's
wallet acknowledged the credit or rollback, with a notice the reference simulator answers."""

from __future__ import annotations

from support.deciders import types_of
from support.seamless import Bridged, game
from support.wallet import WALLET, deposit, place_bet, round_events, verified_settled, voided

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import Message, RoundClosed
from holdem.core.contracts.seamless import (
    ReplyRefusal,
    ReplyRefused,
    RoundClosedAcknowledged,
    RoundClosedNotice,
)
from holdem.wallet.state import State

ROUND = round_events("r1")


def dealt(ante: int = 1_000, aa_bonus: int = 500) -> State:
    state, _ = WALLET.when(WALLET.given([]), deposit(10_000))
    state, _ = WALLET.when(state, place_bet("r1", ante=ante, aa_bonus=aa_bonus))
    state, _ = WALLET.when(state, ROUND.dealt())
    return state


def after(state: State, *messages: Message) -> tuple[State, list[Message]]:
    events: list[Message] = []
    for message in messages:
        state, events = WALLET.when(state, message)
    return state, events


def closed_of(events: list[Message]) -> RoundClosed:
    [closed] = [e for e in events if isinstance(e, RoundClosed)]
    assert events[-1] is closed  # after every movement of the decision
    return closed


def test_a_called_round_closes_with_its_payout_and_says_what_it_took_and_returned() -> None:
    state, events = after(dealt(), ROUND.called(), verified_settled())

    assert types_of(events) == ["wallet.payout_credited", "round.closed"]
    closed = closed_of(events)
    assert (closed.outcome, closed.staked, closed.returned) == ("settled", 3_500, 8_000)
    assert (closed.player_id, closed.round_id, closed.currency) == ("p1", "r1", "EUR")
    assert WALLET.when(state, verified_settled())[1] == []  # the Settled again: no second close


def test_a_folded_round_closes_with_the_payout_of_zero() -> None:
    _, events = after(dealt(), ROUND.folded(), verified_settled(decision="fold"))

    closed = closed_of(events)
    assert (closed.outcome, closed.staked, closed.returned) == ("settled", 1_500, 0)


def test_a_voided_round_closes_with_its_refund_including_a_captured_call() -> None:
    state, events = after(dealt(), ROUND.called(), voided())

    closed = closed_of(events)
    assert (closed.outcome, closed.staked, closed.returned) == ("voided", 3_500, 3_500)
    assert WALLET.when(state, voided())[1] == []


def test_the_decision_alone_does_not_close_a_round() -> None:
    _, events = after(dealt(), ROUND.called())

    assert not [e for e in events if isinstance(e, RoundClosed)]


def test_a_refused_settlement_closes_nothing_and_the_true_one_closes_once() -> None:
    forged = verified_settled().model_copy(update={"total_return": 9_999, "event_id": "forged"})
    state, events = after(dealt(), ROUND.called(), forged)
    assert types_of(events) == ["round.malfunction"]

    _, events = WALLET.when(state, verified_settled())
    assert types_of(events) == ["wallet.payout_credited", "round.closed"]


# --- seamless mode ----------------------------------------------------------------------------


def bridged() -> Bridged:
    b = Bridged(operator=FaultyOperator(OperatorWallet(), Faults()))
    b.fund("p1")
    return b


def test_seamless_closes_a_round_only_once_the_operator_acknowledged_its_credit() -> None:
    b = bridged()
    b.bet("r1")
    b.deliver()

    ended = b.play(game("r1"), "call")
    assert not [e for e in ended if isinstance(e, RoundClosed | RoundClosedNotice)]
    events = b.deliver()  # the operator's Credited

    assert types_of(events) == ["wallet.seamless_credited", "round.closed", "seamless.round_closed"]
    notice = b.of(RoundClosedNotice)[0]
    assert (notice.outcome, notice.final_tx_id) == ("settled", events[0].tx_id)
    assert b.operator.wallet.closes == {"r1": 1}
    acknowledged = b.deliver()  # the simulator's acknowledgement: accepted, nothing to say
    assert acknowledged == [] and isinstance(b.replies[-1], RoundClosedAcknowledged)
    assert b.operator.wallet.out_of_order == []
    assert b.violations() == []


def test_seamless_closes_a_voided_round_after_its_rollback() -> None:
    b = bridged()
    b.bet("r1")
    b.deliver()
    b.void("r1")

    events = b.deliver()

    closed = closed_of([e for e in events if not isinstance(e, RoundClosedNotice)])
    assert (closed.outcome, closed.staked, closed.returned) == ("voided", 100, 100)
    assert b.operator.wallet.closes == {"r1": 1}


def test_a_duplicate_credited_closes_nothing_again() -> None:
    b = bridged()
    b.bet("r1")
    b.deliver()
    b.play(game("r1"), "fold")
    credited = b.operator.wallet.answers[b.published[-1].tx_id]
    b.deliver()

    assert b.reply(credited) == []
    assert len(b.of(RoundClosed)) == 1 and len(b.of(RoundClosedNotice)) == 1


def test_a_debit_that_expired_placed_no_bet_and_closes_no_round() -> None:
    b = Bridged(operator=FaultyOperator(OperatorWallet(), Faults(silence=1.0)))
    b.fund("p1")
    b.bet("r1")
    b.tick(11)  # past the debit's deadline: rolled back, the bet refused
    b.operator = FaultyOperator(OperatorWallet(), Faults())
    b.reply(b.operator.wallet.answer(b.published[0])[0])

    assert b.of(RoundClosed) == [] and b.of(RoundClosedNotice) == []


def test_an_acknowledgement_of_a_round_not_closed_is_refused() -> None:
    b = bridged()
    b.bet("r1")
    b.deliver()
    notice = RoundClosedNotice(
        **{k: getattr(b.published[0], k) for k in ("player_id", "round_id", "occurred_at")},
        event_id="forged-notice",
        tx_id="t-close",
        currency="EUR",
        amount=0,
        outcome="settled",
        debit_tx_id="t1",
        final_tx_id="t2",
    )
    forged = OperatorWallet().answer(notice)[0]

    [refused] = b.reply(forged)

    assert isinstance(refused, ReplyRefused)
    assert refused.reason is ReplyRefusal.UNKNOWN_TRANSACTION
