"""The dealer's session decisions (ADR 020): start one with a player's first bet at a table,
end it on EndSession or after the table's idle timeout, and finish its undecided rounds by
their table's policy at once."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from datetime import datetime, timedelta

from holdem.core.contracts import (
    EndSession,
    Message,
    OperatorEndReason,
    PlayerBlocked,
    SessionEnded,
    SessionEndReason,
    SessionRefusal,
    SessionRejected,
    SessionStarted,
)
from holdem.dealer.context import DealerContext
from holdem.dealer.events import auto_decision, reveal
from holdem.dealer.state import DealerState, Phase, Round, Session

END_REASONS = {reason: SessionEndReason(reason.value) for reason in OperatorEndReason}
_SESSIONS = uuid.UUID("5d3c1f6e-8a47-4c2b-b1e9-2f7a90c4d6e3")


def session_id(player_id: str, table_id: str, command_id: str) -> str:
    """A session's id: from its player, table and first command, so deciding its start again
    gives the same id (and a new session, which needs a new command, another one).

    >>> session_id("p1", "t1", "c1") == session_id("p1", "t1", "c1")
    True
    >>> session_id("p1", "t1", "c1") == session_id("p1", "t1", "c2")
    False
    """
    return str(uuid.uuid5(_SESSIONS, f"{player_id}/{table_id}/{command_id}"))


def open_for_bet(
    state: DealerState, r: Round, command_id: str, idle_timeout_s: int, ctx: DealerContext
) -> tuple[str | None, list[Message]]:
    """The session a round just bet at a table is played in, and the events that start it
    (and end the player's previous one there, if its idle timeout ran out before this bet)."""
    if r.table_id is None:
        return None, []  # the default table: no sessions
    events: list[Message] = []
    current = state.session(r.player_id, r.table_id)
    if current is not None and r.placed_at is not None and r.placed_at >= current.idle_at():
        events.extend(end(state, current, SessionEndReason.IDLE_TIMEOUT, idle_ctx(current, ctx)))
        current = None
    if current is not None:
        return current.session_id, events
    started = SessionStarted(
        **ctx.envelope(r.player_id, r.round_id),
        session_id=session_id(r.player_id, r.table_id, command_id),
        table_id=r.table_id,
        command_id=command_id,
        mode=r.mode,
        idle_timeout_s=idle_timeout_s,
    )
    return started.session_id, [*events, started]


def on_end_session(state: DealerState, command: EndSession, ctx: DealerContext) -> list[Message]:
    """EndSession: the session ended, or a refusal; a resent command answers nothing."""
    answered = state.answered(command.player_id, command.command_id)
    if answered == (command.table_id, command.type):
        return []
    if answered is not None:
        detail = f"command_id {command.command_id} was used for {answered[1]} on {answered[0]}"
        return [_refused(command, SessionRefusal.DUPLICATE, detail, ctx)]
    session = state.session(command.player_id, command.table_id)
    if session is None:
        detail = f"no open session at table {command.table_id}"
        return [_refused(command, SessionRefusal.NO_SESSION, detail, ctx)]
    reason = SessionEndReason.ENDED if command.reason is None else END_REASONS[command.reason]
    return end(state, session, reason, ctx, command.command_id)


def on_player_blocked(
    state: DealerState, event: PlayerBlocked, ctx: DealerContext
) -> list[Message]:
    """The wallet blocked the player (ADR 028): each of his open sessions ends ``blocked`` and
    every dealt round of his still waiting for a decision (a default-table round has no
    session) is finished by its table's policy, in this decision. Read again, the block finds
    nothing left to end: the sessions are gone and the rounds decided."""
    events: list[Message] = []
    for key in sorted(k for k in state.sessions if k[0] == event.player_id):
        reason, session = SessionEndReason.BLOCKED, state.sessions[key]
        events += end(state, session, reason, ctx, event.command_id, rounds_of(events))
    finished = rounds_of(events)
    for round_id in sorted(state.open):
        r = state.rounds[round_id]
        if r.player_id != event.player_id or round_id in finished or not finishable(r):
            continue
        decision = auto_decision(r.timeout_policy or ctx.table.timeout_policy, r, ctx)
        events += reveal(r, decision, timeout_ctx(r, ctx), auto=True, command_id=None)
    return events


def end(
    state: DealerState,
    session: Session,
    reason: SessionEndReason,
    ctx: DealerContext,
    command_id: str | None = None,
    finished: Collection[str] = (),
) -> list[Message]:
    """SessionEnded and the decisions that finish the session's rounds still waiting for one
    (``finished``: rounds this decision has finished already)."""
    ended = SessionEnded(
        **ctx.envelope(session.player_id),
        session_id=session.session_id,
        table_id=session.table_id,
        reason=reason,
        command_id=command_id,
    )
    return [ended, *finish_ended(state, session, ctx, finished)]


def idle_sessions(
    state: DealerState, now: datetime, ctx: DealerContext, resumed_at: datetime | None = None
) -> list[Message]:
    """End the sessions whose idle timeout ran out by ``now``, oldest key first; idle time
    counts from ``resumed_at`` at the earliest (an outage is not the player's idleness)."""
    events: list[Message] = []
    for key in sorted(state.sessions):
        session = state.sessions[key]
        resumed = resumed_at + timedelta(seconds=session.idle_timeout_s) if resumed_at else None
        if now >= session.idle_at() and (resumed is None or now >= resumed):
            reason, own = SessionEndReason.IDLE_TIMEOUT, idle_ctx(session, ctx)
            events.extend(end(state, session, reason, own, finished=rounds_of(events)))
    return events


def idle_ctx(session: Session, ctx: DealerContext) -> DealerContext:
    # Ids derive from the session, not the tick: an idle timeout decided twice is one.
    return ctx.derived(f"session-idle/{session.session_id}", None)


def finish_ended(
    state: DealerState, ending: Session, ctx: DealerContext, finished: Collection[str] = ()
) -> list[Message]:
    """The table's decision for every dealt round of an ended session (``ending``, or one over
    before it), but those in ``finished``: at once, not after its decision timeout. The ids are
    the decision timeout's (``timeout/<round>``): a round finished by either is recognisably
    finished once."""
    events: list[Message] = []
    for round_id in sorted(state.open):
        r = state.rounds[round_id]
        if round_id in finished or not finishable(r):
            continue
        if not (state.session_over(r) or _in(r, ending)):
            continue
        decision = auto_decision(r.timeout_policy or ctx.table.timeout_policy, r, ctx)
        events.extend(reveal(r, decision, timeout_ctx(r, ctx), auto=True, command_id=None))
    return events


def finishable(r: Round) -> bool:
    """Dealt, waiting for a decision, and not on its way to a void."""
    return r.phase is Phase.DEALT and r.malfunction_id is None and r.dealt_at is not None


def timeout_ctx(r: Round, ctx: DealerContext) -> DealerContext:
    return ctx.derived(f"timeout/{r.round_id}", r.correlation_id)


def _in(r: Round, session: Session) -> bool:
    """Whether ``r`` is played in ``session`` (the player's open one at its table)."""
    return r.session_id is not None and (r.player_id, r.table_id) == (
        session.player_id,
        session.table_id,
    )


def rounds_of(events: list[Message]) -> set[str]:
    """The rounds the events are about: those a decision has finished already."""
    return {e.round_id for e in events if e.round_id is not None}


def _refused(
    command: EndSession, reason: SessionRefusal, detail: str, ctx: DealerContext
) -> SessionRejected:
    names = {"command_id": command.command_id, "table_id": command.table_id}
    return SessionRejected(**ctx.envelope(command.player_id), **names, reason=reason, detail=detail)
