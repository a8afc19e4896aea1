"""The money side of a round: capture or release the call, credit the payout, refund a void.
A free hand (ADR 029) pays its winnings only and gives its stakes back to the promotion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from holdem.core.contracts import (
    CallCaptured,
    Called,
    CallReleased,
    Folded,
    Malfunction,
    Message,
    PayoutCredited,
    RoundClosed,
    RoundVoided,
    Settled,
    StakesRefunded,
)
from holdem.core.contracts.promotions import FreeStakeRefunded
from holdem.core.contracts.rounds import SETTLEMENT_DUPLICATE, SETTLEMENT_MISMATCH
from holdem.core.decider import Context
from holdem.core.verify import VerificationError, differences, result_of
from holdem.wallet.ledger import Ledger
from holdem.wallet.state import Evidence, Stake, State


def _open_stake(state: State, message: Message) -> Stake | None:
    """The player's stake in this round, if the round is neither paid nor refunded."""
    stake = state.round_of(message.player_id, message.round_id)
    return stake if stake is not None and stake.status == "open" else None


def _resolve_call(stake: Stake, ledger: Ledger, round_id: str, capture: bool) -> list[Message]:
    """Capture or release a still-held call; nothing if it was already resolved."""
    if stake.call != "held":
        return []
    campaign = {"campaign_id": stake.campaign_id}
    if capture:
        key = f"capture:{round_id}"
        return [ledger.move(CallCaptured, key, stake.call_hold, round_id, **campaign)]
    return [ledger.move(CallReleased, f"release:{round_id}", stake.call_hold, round_id, **campaign)]


def payout_of(stake: Stake, event: Settled) -> int:
    """What the player is paid for a verified Settled: its total return; for a free hand the
    winnings of its ante and bonus without the free stakes, and the call's whole return (the
    call was the player's money).

    >>> from holdem.core.contracts import Mode
    >>> free = Stake("p", "EUR", Mode.REAL, 100, 10, campaign_id="c")
    >>> won = Settled.model_construct(ante_return=200, bonus_return=0, call_return=400,
    ...                               total_return=600)
    >>> payout_of(free, won), payout_of(Stake("p", "EUR", Mode.REAL, 100, 10), won)
    (500, 600)
    """
    if stake.campaign_id is None:
        return event.total_return
    ante_won = max(0, event.ante_return - stake.ante)
    bonus_won = max(0, event.bonus_return - stake.aa_bonus)
    return ante_won + bonus_won + event.call_return


def on_decision(state: State, event: Called | Folded, ctx: Context) -> list[Message]:
    """Called captures the held call for the house; Folded gives it back to the player. Only
    the reveal that verifies against the Dealt commitment moves it (a forgery has no deck)."""
    stake = _open_stake(state, event)
    reveal = state.evidence_of(event.player_id, event.round_id).reveal
    if stake is None or reveal is None or reveal.event_id != event.event_id:
        return []
    ledger = Ledger(state, stake.account, ctx)
    return _resolve_call(stake, ledger, event.round_id, capture=isinstance(event, Called))


def on_settled(state: State, event: Settled, ctx: Context) -> list[Message]:
    """Credit the total return once (0 for a lost round), and only if the wallet recomputes the
    same result from the revealed deck; anything else is refused on the log (ADR 008)."""
    stake = state.round_of(event.player_id, event.round_id)
    if stake is None or stake.status != "open":
        if stake is not None and stake.paid_by == event.event_id:
            return []  # the Settled it paid, delivered again
        return [refusal(event, ctx, SETTLEMENT_DUPLICATE, "the round has no open stake")]
    problem = settlement_problem(stake, state.evidence_of(event.player_id, event.round_id), event)
    if problem is not None:
        return [refusal(event, ctx, SETTLEMENT_MISMATCH, problem)]
    ledger = Ledger(state, stake.account, ctx)
    # The verified reveal resolved the call already; this only matters if its capture or
    # release was never published: a payout must not leave the call hanging.
    events = _resolve_call(stake, ledger, event.round_id, capture=event.decision == "call")
    # Paid even when it is 0: the ledger then closes every settled round, so nothing (not even a
    # RoundVoided that should never come) can refund a lost round, and auditors see each stake end.
    key, paid = f"payout:{event.round_id}", payout_of(stake, event)
    campaign = {"campaign_id": stake.campaign_id}
    events.append(ledger.move(PayoutCredited, key, paid, event.round_id, **campaign))
    return events


def on_voided(state: State, event: RoundVoided, ctx: Context) -> list[Message]:
    """Give back everything the round took: stakes, a captured call, a still-held call; a free
    hand's stakes to the promotion (the hand is the campaign's again)."""
    stake = _open_stake(state, event)
    if stake is None:
        return []
    ledger = Ledger(state, stake.account, ctx)
    events = _resolve_call(stake, ledger, event.round_id, capture=False)
    round_id, campaign = event.round_id, {"campaign_id": stake.campaign_id}
    if stake.campaign_id is not None:
        key = f"free-refund:{round_id}"
        events.append(ledger.move(FreeStakeRefunded, key, stake.free_stake, round_id, **campaign))
    key = f"refund:{round_id}"
    events.append(ledger.move(StakesRefunded, key, stake.taken, round_id, **campaign))
    return events


def round_closed(state: State, events: list[Message], ctx: Context) -> RoundClosed | None:
    """The round's RoundClosed (ADR 028) if ``events`` hold its last money movement: the payout
    of its Settled or the refund of its void. ``staked``: ante, bonus and a captured call, the
    player's own money: a free hand's ante and bonus are the promotion's (ADR 029), so it
    stakes its captured call only, and ``returned`` is what the player was credited."""
    last = next((e for e in events if isinstance(e, PayoutCredited | StakesRefunded)), None)
    stake = None if last is None else state.round_of(last.player_id, last.round_id)
    if last is None or stake is None:
        return None
    captured = stake.call == "captured" or any(isinstance(e, CallCaptured) for e in events)
    staked = stake.ante + stake.aa_bonus - stake.free_stake + (stake.call_hold if captured else 0)
    voided = isinstance(last, StakesRefunded)
    return RoundClosed(
        **ctx.envelope(last.player_id, last.round_id),
        outcome="voided" if voided else "settled",
        currency=stake.currency,
        mode=stake.mode,
        staked=staked,
        returned=last.amount,
        net=last.amount - staked,
    )


def settlement_problem(stake: Stake, evidence: Evidence, event: Settled) -> str | None:
    """Why ``event`` is not the result the rules give this round, or None if it is."""
    reveal = evidence.reveal
    if evidence.commitment is None or reveal is None:
        return "no revealed deck that verifies against the Dealt commitment"
    try:
        expected = result_of(stake, evidence.commitment, reveal)
    except VerificationError as error:
        return str(error)
    wrong = differences(event, expected)
    return None if not wrong else f"differs (got, expected): {wrong}"


def refusal(event: Settled, ctx: Context, kind: str, detail: str) -> Malfunction:
    """The wallet's public refusal of a Settled; ``causation_id`` names the refused record."""
    envelope = {**ctx.envelope(event.player_id, event.round_id), "causation_id": event.event_id}
    return Malfunction(**envelope, source="wallet", reason=f"{kind}: {detail}"[:500])


RoundHandler: TypeAlias = Callable[[State, Any, Context], list[Message]]
ROUND_HANDLERS: dict[type[Message], RoundHandler] = {
    Called: on_decision,
    Folded: on_decision,
    Settled: on_settled,
    RoundVoided: on_voided,
}
