"""Decisions that time makes: the decision timeout's policy and the stuck-round watchdog."""

from __future__ import annotations

from datetime import datetime

from holdem.core.contracts import Message
from holdem.dealer.context import DealerContext, TimeoutPolicy
from holdem.dealer.events import Decision, malfunction, reveal
from holdem.dealer.state import DECIDED, DealerState, Phase, Round


def on_tick(state: DealerState, now: datetime, ctx: DealerContext) -> list[Message]:
    """Complete the rounds whose player ran out of time; report rounds stuck past the bound."""
    events: list[Message] = []
    for round_id in sorted(state.open):  # sorted: the same state gives the same events
        r = state.rounds[round_id]
        events.extend(_timeout(r, now, ctx) or _watchdog(r, now, ctx))
    return events


def _timeout(r: Round, now: datetime, ctx: DealerContext) -> list[Message]:
    table = ctx.table
    if r.phase is not Phase.DEALT or r.malfunction_id is not None or r.dealt_at is None:
        return []
    if now < r.dealt_at + table.decision_timeout:
        return []
    decision = auto_decision(table.timeout_policy, r)
    # Ids derive from the round, not the tick, so a timeout decided twice is recognisably one.
    round_ctx = ctx.derived(f"timeout/{r.round_id}", r.correlation_id)
    return reveal(r, decision, round_ctx, auto=True, command_id=None)


def _watchdog(r: Round, now: datetime, ctx: DealerContext) -> list[Message]:
    if r.malfunction_id is not None:  # once per round: any malfunction already recorded counts
        return []
    if r.phase is Phase.BET_PLACED:
        since, waiting = r.placed_at, "no Dealt after BetPlaced"
    elif r.phase in DECIDED:
        since, waiting = r.decided_at, f"not settled after {r.phase.value}"
    else:
        return []
    bound = ctx.table.stuck_after
    if since is None or now < since + bound:
        return []
    round_ctx = ctx.derived(f"watchdog/{r.round_id}", r.correlation_id)
    reason = f"stuck: {waiting} for {bound.total_seconds():g}s"
    return malfunction(r, round_ctx, "watchdog", reason)


# OPTIMAL waits for holdem.core.strategy (the exact EV of calling vs folding, from the math
# work): until it lands the settings refuse it, and auto_decision raises if handed it anyway.
AVAILABLE_POLICIES = frozenset({TimeoutPolicy.FOLD, TimeoutPolicy.CALL})


def auto_decision(policy: TimeoutPolicy, r: Round) -> Decision:
    """The table's decision for a player who did not decide in time."""
    if policy is TimeoutPolicy.CALL:
        return "call"
    if policy is TimeoutPolicy.FOLD:
        return "fold"
    raise NotImplementedError(f"timeout policy {policy.value!r} needs holdem.core.strategy")
