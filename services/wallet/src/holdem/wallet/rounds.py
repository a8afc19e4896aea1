"""The money side of a round: capture or release the call, credit the payout, refund a void."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from holdem.core.contracts import (
    CallCaptured,
    Called,
    CallReleased,
    Folded,
    Message,
    PayoutCredited,
    RoundVoided,
    Settled,
    StakesRefunded,
)
from holdem.core.decider import Context
from holdem.wallet.ledger import Ledger
from holdem.wallet.state import Stake, State


def _open_stake(state: State, message: Message) -> Stake | None:
    """The player's stake in this round, if the round is neither paid nor refunded."""
    stake = state.round_of(message.player_id, message.round_id)
    return stake if stake is not None and stake.status == "open" else None


def _resolve_call(stake: Stake, ledger: Ledger, round_id: str, capture: bool) -> list[Message]:
    """Capture or release a still-held call; nothing if it was already resolved."""
    if stake.call != "held":
        return []
    if capture:
        return [ledger.move(CallCaptured, f"capture:{round_id}", stake.call_hold, round_id)]
    return [ledger.move(CallReleased, f"release:{round_id}", stake.call_hold, round_id)]


def on_decision(state: State, event: Called | Folded, ctx: Context) -> list[Message]:
    """Called captures the held call for the house; Folded gives it back to the player."""
    stake = _open_stake(state, event)
    if stake is None:
        return []
    ledger = Ledger(state, stake.account, ctx)
    return _resolve_call(stake, ledger, event.round_id, capture=isinstance(event, Called))


def on_settled(state: State, event: Settled, ctx: Context) -> list[Message]:
    """Credit the total return once (0 for a lost round); a round already closed gets nothing."""
    stake = _open_stake(state, event)
    if stake is None:
        return []
    ledger = Ledger(state, stake.account, ctx)
    # Called/Folded precede Settled on the round's partition, so this only matters if the
    # decision event was never seen: a payout must not leave the call hanging.
    events = _resolve_call(stake, ledger, event.round_id, capture=event.decision == "call")
    # Paid even when it is 0: the ledger then closes every settled round, so nothing (not even a
    # RoundVoided that should never come) can refund a lost round, and auditors see each stake end.
    key = f"payout:{event.round_id}"
    events.append(ledger.move(PayoutCredited, key, event.total_return, event.round_id))
    return events


def on_voided(state: State, event: RoundVoided, ctx: Context) -> list[Message]:
    """Give back everything the round took: stakes, a captured call, a still-held call."""
    stake = _open_stake(state, event)
    if stake is None:
        return []
    ledger = Ledger(state, stake.account, ctx)
    events = _resolve_call(stake, ledger, event.round_id, capture=False)
    key = f"refund:{event.round_id}"
    events.append(ledger.move(StakesRefunded, key, stake.taken, event.round_id))
    return events


RoundHandler: TypeAlias = Callable[[State, Any, Context], list[Message]]
ROUND_HANDLERS: dict[type[Message], RoundHandler] = {
    Called: on_decision,
    Folded: on_decision,
    Settled: on_settled,
    RoundVoided: on_voided,
}
