"""Decisions that time makes: the decision timeout's policy and the stuck-round watchdog."""

from __future__ import annotations

from datetime import datetime, timedelta

from holdem.core.contracts import Message
from holdem.core.deck import deal
from holdem.core.strategy import optimal
from holdem.dealer.context import DealerContext, TimeoutPolicy
from holdem.dealer.events import Decision, malfunction, opened_deck, reveal
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
    timeout = (
        table.decision_timeout
        if r.decision_timeout_s is None
        else timedelta(seconds=r.decision_timeout_s)
    )
    if now < r.dealt_at + timeout:
        return []
    decision = auto_decision(r.timeout_policy or table.timeout_policy, r, ctx)
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


AVAILABLE_POLICIES = frozenset(TimeoutPolicy)


def auto_decision(policy: TimeoutPolicy, r: Round, ctx: DealerContext) -> Decision:
    """The table's decision for a player who did not decide in time."""
    if policy is TimeoutPolicy.CALL:
        return "call"
    if policy is TimeoutPolicy.FOLD:
        return "fold"
    # OPTIMAL: the player's best play by exact EV (a table lookup; the table is loaded, or built
    # by the full enumeration, when the dealer starts with this policy).
    opened = opened_deck(r, ctx)
    if opened is None:  # no deck: the reveal reports it (deck_missing) whatever is decided
        return "fold"
    dealt = deal(opened.codes)
    return optimal(dealt.player, dealt.flop)
