"""Decisions that time makes: the decision timeout's policy and the stuck-round watchdog."""

from __future__ import annotations

from datetime import datetime, timedelta

from holdem.core.contracts import Message
from holdem.dealer.context import DealerContext, TimeoutPolicy
from holdem.dealer.events import auto_decision, malfunction, reveal
from holdem.dealer.sessions import finishable, idle_sessions, rounds_of, timeout_ctx
from holdem.dealer.state import DECIDED, DealerState, Phase, Round

__all__ = ["AVAILABLE_POLICIES", "auto_decision", "on_tick"]


def on_tick(
    state: DealerState, now: datetime, ctx: DealerContext, resumed_at: datetime | None = None
) -> list[Message]:
    """End the sessions idle too long (and finish their rounds); complete the rounds whose
    player ran out of time; report rounds stuck past the bound. Every bound counts from
    ``resumed_at`` at the earliest: time in which the pipeline could not make progress (a
    broker outage, a restart) is not the player's, nor the round's (issue 18 item 6)."""
    events = idle_sessions(state, now, ctx, resumed_at)
    finished = rounds_of(events)  # the rounds those ends finished are not timed out again
    for round_id in sorted(state.open):  # sorted: the same state gives the same events
        if round_id in finished:
            continue
        r = state.rounds[round_id]
        events.extend(
            _timeout(state, r, now, ctx, resumed_at) or _watchdog(state, r, now, ctx, resumed_at)
        )
    return events


def since(at: datetime, resumed_at: datetime | None) -> datetime:
    """Where a bound that started ``at`` counts from: ``at``, or the last resumption if later."""
    return at if resumed_at is None or resumed_at <= at else resumed_at


def _timeout(
    state: DealerState, r: Round, now: datetime, ctx: DealerContext, resumed_at: datetime | None
) -> list[Message]:
    table = ctx.table
    if not finishable(r) or r.dealt_at is None:
        return []
    timeout = (
        table.decision_timeout
        if r.decision_timeout_s is None
        else timedelta(seconds=r.decision_timeout_s)
    )
    # A round of an ended session is due at once (ADR 020).
    if now < since(r.dealt_at, resumed_at) + timeout and not state.session_over(r):
        return []
    decision = auto_decision(r.timeout_policy or table.timeout_policy, r, ctx)
    # Ids derive from the round, not the tick, so a timeout decided twice is recognisably one.
    return reveal(r, decision, timeout_ctx(r, ctx), auto=True, command_id=None)


def _watchdog(
    state: DealerState, r: Round, now: datetime, ctx: DealerContext, resumed_at: datetime | None
) -> list[Message]:
    if r.malfunction_id is not None:  # once per round: any malfunction already recorded counts
        return []
    if r.phase is Phase.BET_PLACED:
        started, waiting = r.placed_at, "no Dealt after BetPlaced"
    elif r.phase in DECIDED:
        started, waiting = r.decided_at, f"not settled after {r.phase.value}"
        # Delayed, not stuck, until settlement has ended a round decided after this one: a
        # broker outage or a settlement restart holds every round up, and they then settle
        # (issue 18 item 6, ADR 025). Settlement reads the partition in order, so once a later
        # decision is settled, this round was read and not settled.
        if started is None or state.settled_upto is None or state.settled_upto <= started:
            return []
    else:
        return []
    bound = ctx.table.stuck_after
    if started is None or now < since(started, resumed_at) + bound:
        return []
    round_ctx = ctx.derived(f"watchdog/{r.round_id}", r.correlation_id)
    reason = f"stuck: {waiting} for {bound.total_seconds():g}s"
    return malfunction(r, round_ctx, "watchdog", reason)


AVAILABLE_POLICIES = frozenset(TimeoutPolicy)
