"""The dealer's state: every round it knows and its players' open sessions, folded from the
rounds and vault topics. As every service's (``holdem.core.decider``): one mutable object per
partition that ``evolve`` updates in place; a ``Round`` or ``Session`` in it is a frozen value,
replaced whole, so ``decide`` can work out a round's next value (``folded_round``) without
touching the state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Final

from pydantic import AwareDatetime, NonNegativeInt

from holdem.core.cards import Card
from holdem.core.contracts import (
    BetPlaced,
    BetRejected,
    Called,
    CommandRejected,
    Dealt,
    DeckForced,
    DeckForceRejected,
    DeckSealed,
    Folded,
    Malfunction,
    Mode,
    PlaceBet,
    Reason,
    Rebet,
    RoundVoided,
    SessionEnded,
    SessionRejected,
    SessionStarted,
    Settled,
    TimeoutPolicy,
)


class Phase(StrEnum):
    BET_PLACED = "bet_placed"
    DEALT = "dealt"
    CALLED = "called"
    FOLDED = "folded"
    VOIDED = "voided"
    SETTLED = "settled"


# How far a round has come; evolve only moves forward, so an echo of an older event is a no-op.
_RANK: dict[Phase | None, int] = {
    None: 0,
    Phase.BET_PLACED: 1,
    Phase.DEALT: 2,
    Phase.CALLED: 3,
    Phase.FOLDED: 3,
    Phase.VOIDED: 4,
    Phase.SETTLED: 4,
}
# What the dealer remembers of a player's past (ADR 010): his last CLOSED_KEPT closed rounds
# (a late Call gets round_closed, a late event is recognised) and the last COMMANDS_KEPT command
# ids he used (a resend answers nothing). Older ones are forgotten: a command for such a round
# gets unknown_round, which moves nothing; the state no longer grows with history.
CLOSED_KEPT: Final = 256
COMMANDS_KEPT: Final = 256
# Sessions (ADR 020): only open ones are kept, plus the ids of a player's last ENDED_KEPT ended
# sessions, so that a SessionStarted read again (the dealer's own event, back as an input)
# after its session ended cannot open it again.
ENDED_KEPT: Final = 16
# Forced decks (test mode, ADR 030): one pending per player, and at most FORCED_KEPT players
# with one in a partition (the oldest is forgotten): a test harness, not a player base.
FORCED_KEPT: Final = 1024
FORCE_COMMAND: Final = "command.force_next_deck"

UNDECIDED = frozenset({Phase.BET_PLACED, Phase.DEALT})
DECIDED = frozenset({Phase.CALLED, Phase.FOLDED})
CLOSED = frozenset({Phase.VOIDED, Phase.SETTLED})


@dataclass(frozen=True, slots=True)
class Round:
    """One round as the dealer sees it. ``phase is None``: referenced (a malfunction, a rejected
    command) before its BetPlaced was seen; such a round is unknown to players."""

    round_id: str
    player_id: str
    phase: Phase | None = None
    correlation_id: str | None = None
    currency: str = ""
    mode: Mode = Mode.REAL
    ante: NonNegativeInt = 0
    aa_bonus: NonNegativeInt = 0
    placed_at: AwareDatetime | None = None
    dealt_at: AwareDatetime | None = None
    decided_at: AwareDatetime | None = None
    # The vault's record of the deck, still sealed: opened (ctx.vault) only to deal or reveal,
    # so the state holds no card the player has not seen; dropped once revealed.
    sealed: DeckSealed | None = None
    commitment: str = ""
    malfunction_id: str | None = None  # the first Malfunction seen for the round
    malfunction_reason: str = ""
    # The round's own terms, from its BetPlaced v2 (its table's version); None: the dealer's
    # settings (a v1 BetPlaced, the default table).
    decision_timeout_s: NonNegativeInt | None = None
    timeout_policy: TimeoutPolicy | None = None
    # The table the round is bet at (BetPlaced v2) and its session (Dealt v2, ADR 020); None:
    # the default table, which has no sessions.
    table_id: str | None = None
    session_id: str | None = None
    forced: bool = False  # dealt from a forced deck (test mode, ADR 030): its reveal says so


@dataclass(frozen=True, slots=True)
class Session:
    """A player's open session at a table (ADR 020). ``last_active``: the time of his last
    command there (a bet, a Call or Fold), the start of the idle timeout."""

    session_id: str
    player_id: str
    table_id: str
    idle_timeout_s: NonNegativeInt
    started_at: AwareDatetime
    last_active: AwareDatetime
    mode: Mode = Mode.REAL

    def idle_at(self) -> datetime:
        """When the session ends if the player sends no command at the table before."""
        return self.last_active + timedelta(seconds=self.idle_timeout_s)


# What a player's command_id was used for: the round and the command type it answered.
Answered = tuple[str, str]


@dataclass(slots=True)
class DealerState:
    """The rounds by id (open, or closed and among their player's last CLOSED_KEPT), the ids of
    the open ones (the only ones a tick has to look at), and the commands answered, by
    (player_id, command_id): a command id is the player's idempotency key across all his
    rounds, as in the wallet, and two players may pick the same one. ``closed`` and ``used``
    keep, per player, the order in which his rounds closed and his command ids were used, oldest
    first, so the oldest is the one forgotten. ``evolve`` updates it in place."""

    rounds: dict[str, Round] = field(default_factory=dict)
    open: set[str] = field(default_factory=set)
    commands: dict[tuple[str, str], Answered] = field(default_factory=dict)
    closed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    used: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Open sessions by (player_id, table_id); the ids of each player's last ended ones.
    sessions: dict[tuple[str, str], Session] = field(default_factory=dict)
    ended: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Per player, the round of his latest PlaceBet or Rebet the wallet has not answered yet
    # (issue 18 item 3, ADR 024): a Call or Fold for it is early (out_of_order), not unknown.
    pending: dict[str, str] = field(default_factory=dict)
    # The latest decision time of a decided round that settlement has ended (Settled, or its
    # RoundVoided): settlement reads a partition in order, so a round decided before it and
    # still open is stuck, not delayed (the watchdog's evidence, issue 18 item 6, ADR 025).
    settled_upto: datetime | None = None
    # Per player, the first cards of his next play-money round (DeckForced, test mode, ADR 030),
    # as card codes in deal order; consumed by the round dealt from it (its Dealt says forced).
    forced: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def session(self, player_id: str, table_id: str | None) -> Session | None:
        return None if table_id is None else self.sessions.get((player_id, table_id))

    def session_over(self, r: Round) -> bool:
        """Whether ``r`` belongs to a session that is no longer open (ended or timed out)."""
        if r.session_id is None or r.table_id is None:
            return False
        current = self.session(r.player_id, r.table_id)
        return current is None or current.session_id != r.session_id

    def get(self, round_id: str | None) -> Round | None:
        return None if round_id is None else self.rounds.get(round_id)

    def put(self, round_: Round) -> None:
        before = self.rounds.get(round_.round_id)
        self.rounds[round_.round_id] = round_
        if round_.phase is not None and round_.phase not in CLOSED:
            self.open.add(round_.round_id)
        else:
            self.open.discard(round_.round_id)
        if round_.phase in CLOSED and (before is None or before.phase not in CLOSED):
            self._forget_old_rounds(round_)

    def _forget_old_rounds(self, round_: Round) -> None:
        order = (*self.closed.get(round_.player_id, ()), round_.round_id)
        for old in order[:-CLOSED_KEPT]:
            forgotten = self.rounds.get(old)
            if forgotten is not None and forgotten.phase in CLOSED:  # not an id reused since
                del self.rounds[old]
        self.closed[round_.player_id] = order[-CLOSED_KEPT:]

    def answered(self, player_id: str, command_id: str) -> Answered | None:
        return self.commands.get((player_id, command_id))

    def answer(self, player_id: str, command_id: str, answered: Answered) -> None:
        if (player_id, command_id) in self.commands:
            return
        order = (*self.used.get(player_id, ()), command_id)
        self.commands[(player_id, command_id)] = answered
        for old in order[:-COMMANDS_KEPT]:
            self.commands.pop((player_id, old), None)
        self.used[player_id] = order[-COMMANDS_KEPT:]


def _session_started(state: DealerState, e: SessionStarted) -> None:
    key = (e.player_id, e.table_id)
    if key in state.sessions or e.session_id in state.ended.get(e.player_id, ()):
        return  # open already, or ended since: an echo opens nothing
    at = e.occurred_at
    state.sessions[key] = Session(
        e.session_id, e.player_id, e.table_id, e.idle_timeout_s, at, at, e.mode
    )


def _session_ended(state: DealerState, e: SessionEnded) -> None:
    if e.command_id is not None:
        state.answer(e.player_id, e.command_id, (e.table_id, "command.end_session"))
    key = (e.player_id, e.table_id)
    current = state.sessions.get(key)
    if current is not None and current.session_id == e.session_id:
        del state.sessions[key]
    ended = state.ended.get(e.player_id, ())
    if e.session_id not in ended:
        state.ended[e.player_id] = (*ended, e.session_id)[-ENDED_KEPT:]


def _touch(state: DealerState, player_id: str, table_id: str | None, at: datetime) -> None:
    """A command of the player at the table: his session's idle timeout starts again, unless it
    had run out already (the dealer ends that session, and a bet starts a new one)."""
    session = state.session(player_id, table_id)
    if session is None or at <= session.last_active or at >= session.idle_at():
        return
    state.sessions[(player_id, session.table_id)] = replace(session, last_active=at)


def _sessions(state: DealerState, event: Any) -> None:
    """The sessions' part of ``evolve``: their own events and the commands that keep them."""
    if isinstance(event, SessionStarted):
        _session_started(state, event)
    elif isinstance(event, SessionEnded):
        _session_ended(state, event)
    elif isinstance(event, SessionRejected):
        state.answer(event.player_id, event.command_id, (event.table_id, "command.end_session"))
    elif isinstance(event, BetPlaced):
        _touch(state, event.player_id, event.table_id, event.occurred_at)
    elif isinstance(event, Called | Folded) and not event.auto:
        r = state.rounds.get(event.round_id)
        if r is not None and r.player_id == event.player_id:
            _touch(state, r.player_id, r.table_id, event.occurred_at)


def _forced(state: DealerState, event: DeckForced | DeckForceRejected | Dealt) -> None:
    """The forced decks' part of ``evolve``: a DeckForced sets the player's pending one (a new
    one replaces it), the round dealt from it consumes it, a refusal only uses the command_id."""
    if isinstance(event, Dealt):
        # Only its first fold consumes: read again, it must not take a deck forced since.
        r = state.rounds.get(event.round_id)
        if event.forced and (r is None or _RANK[r.phase] < _RANK[Phase.DEALT]):
            state.forced.pop(event.player_id, None)
        return
    # The command_id marks the DeckForced as folded: read again (the dealer's own event back as
    # an input, a replay overlapping the live read) it must not set again a deck a round
    # consumed since, or two rounds would be dealt from it.
    first = state.answered(event.player_id, event.command_id) is None
    state.answer(event.player_id, event.command_id, ("", FORCE_COMMAND))
    if isinstance(event, DeckForced) and first:
        state.forced.pop(event.player_id, None)  # a new one replaces it, and is the newest
        state.forced[event.player_id] = tuple(Card.parse(text) for text in event.cards)
        while len(state.forced) > FORCED_KEPT:
            del state.forced[next(iter(state.forced))]


def initial_state() -> DealerState:
    return DealerState()


def _bet_placed(r: Round, e: BetPlaced) -> Round:
    if r.phase is not None:
        return r
    return replace(
        r,
        player_id=e.player_id,
        phase=Phase.BET_PLACED,
        correlation_id=e.correlation_id,
        currency=e.currency,
        mode=e.mode,
        ante=e.ante,
        aa_bonus=e.aa_bonus,
        placed_at=e.occurred_at,
        decision_timeout_s=e.decision_timeout_s,
        timeout_policy=e.timeout_policy,
        table_id=e.table_id,
    )


def _deck_sealed(r: Round, e: DeckSealed) -> Round:
    # The vault may be replayed after the rounds topic: a deck for a decided round stays out.
    if r.sealed is not None or _RANK[r.phase] > _RANK[Phase.DEALT]:
        return r
    return replace(r, sealed=e, commitment=e.commitment)


def _dealt(r: Round, e: Dealt) -> Round:
    if _RANK[r.phase] >= _RANK[Phase.DEALT]:
        return r
    return replace(
        r,
        player_id=e.player_id,
        phase=Phase.DEALT,
        correlation_id=r.correlation_id or e.correlation_id,
        currency=e.currency,
        mode=e.mode,
        ante=e.ante,
        aa_bonus=e.aa_bonus,
        dealt_at=e.occurred_at,
        commitment=r.commitment or e.commitment,
        session_id=e.session_id,
        forced=e.forced,
    )


def _decided(r: Round, e: Called | Folded) -> Round:
    if _RANK[r.phase] >= _RANK[Phase.CALLED]:
        return r
    phase = Phase.CALLED if isinstance(e, Called) else Phase.FOLDED
    # The deck is public from here on; keeping it would only cost memory.
    return replace(r, phase=phase, decided_at=e.occurred_at, sealed=None)


def _closed(phase: Phase) -> Callable[[Round, Any], Round]:
    def apply(r: Round, e: Any) -> Round:
        if r.phase in CLOSED:
            return r
        return Round(
            r.round_id,
            r.player_id,
            phase,
            commitment=r.commitment,
            malfunction_id=r.malfunction_id,
            malfunction_reason=r.malfunction_reason,
        )

    return apply


def _settled(r: Round, e: Settled) -> Round:
    # Settlement settles decided rounds only: a Settled for an undecided round is a forgery
    # and must not close it under the player (the wallet refuses to pay it).
    return _closed(Phase.SETTLED)(r, e) if r.phase in DECIDED else r


def _malfunction(r: Round, e: Malfunction) -> Round:
    if e.refuses_settled():  # the wallet refusing a record, not a fault of the round
        return r
    if r.malfunction_id is not None:
        return r
    return replace(r, malfunction_id=e.event_id, malfunction_reason=f"{e.source}: {e.reason}")


def _rejected(r: Round, e: CommandRejected) -> Round:
    return r  # the refused command is remembered in DealerState.commands only


_APPLY: dict[type, Callable[[Round, Any], Round]] = {
    BetPlaced: _bet_placed,
    DeckSealed: _deck_sealed,
    Dealt: _dealt,
    Called: _decided,
    Folded: _decided,
    Settled: _settled,
    RoundVoided: _closed(Phase.VOIDED),
    Malfunction: _malfunction,
    CommandRejected: _rejected,
}
_SESSION_EVENTS = (SessionStarted, SessionEnded, SessionRejected)
_FORCED_EVENTS = (DeckForced, DeckForceRejected)

# The message models evolve folds: the bet commands and BetRejected only for ``pending``.
FOLDED = (*_APPLY, *_SESSION_EVENTS, *_FORCED_EVENTS, PlaceBet, Rebet, BetRejected)

# The command type behind an event that answers a player's command.
_ANSWERS: dict[type, str] = {
    Called: "command.call",
    Folded: "command.fold",
    Malfunction: "command.void_round",
}


def folded_round(state: DealerState, event: Any) -> Round | None:
    """The round of ``event`` as ``evolve`` would leave it, the state untouched: what a
    decision on an event not folded yet sees (None: no such round, or the event makes none)."""
    apply = _APPLY.get(type(event))
    round_id = getattr(event, "round_id", None)
    current = state.rounds.get(round_id) if round_id is not None else None
    if apply is None or round_id is None or isinstance(event, CommandRejected):
        return current
    before = current or Round(round_id, event.player_id)
    after = apply(before, event)
    return current if after is before else after


# A refusal that does not use up the command_id: the same command may be sent again (ADR 024).
RETRYABLE: Final = frozenset({Reason.OUT_OF_ORDER})


def _pending(state: DealerState, event: Any) -> None:
    """A bet sent (a command) waits for the wallet's answer; BetPlaced or BetRejected ends it."""
    player_id, round_id = event.player_id, event.round_id
    if isinstance(event, PlaceBet | Rebet):
        known = state.rounds.get(round_id)
        if known is None or known.phase is None:  # not answered already (a resend)
            state.pending[player_id] = round_id
    elif state.pending.get(player_id) == round_id:
        del state.pending[player_id]


def _settlement_progress(state: DealerState, r: Round | None) -> None:
    """Settlement ended decided round ``r`` (only settlement ends a decided round, ADR 004)."""
    if r is None or r.phase not in DECIDED or r.decided_at is None:
        return
    if state.settled_upto is None or state.settled_upto < r.decided_at:
        state.settled_upto = r.decided_at


def evolve(state: DealerState, event: Any) -> DealerState:
    """Fold one rounds or vault event (or a bet command, for ``pending``) into ``state``, in
    place, and return it. Re-applying an event the state reflects changes nothing."""
    if isinstance(event, PlaceBet | Rebet | BetRejected):
        _pending(state, event)
        return state
    if isinstance(event, BetPlaced):
        _pending(state, event)
    _sessions(state, event)
    if isinstance(event, _SESSION_EVENTS):
        return state
    if isinstance(event, _FORCED_EVENTS):
        _forced(state, event)
        return state
    if isinstance(event, Dealt):
        _forced(state, event)
    apply = _APPLY.get(type(event))
    round_id = getattr(event, "round_id", None)
    if apply is None or round_id is None:
        return state
    command_id = getattr(event, "command_id", None)
    retryable = isinstance(event, CommandRejected) and event.reason in RETRYABLE
    if command_id is not None and type(event) is not BetPlaced and not retryable:
        kind = event.command_type if isinstance(event, CommandRejected) else _ANSWERS[type(event)]
        state.answer(event.player_id, command_id, (round_id, kind))
    if isinstance(event, CommandRejected):
        return state  # a refusal changes no round
    current = state.rounds.get(round_id)
    if isinstance(event, Settled | RoundVoided):
        _settlement_progress(state, current)
    before = current or Round(round_id, event.player_id)
    after = apply(before, event)
    if after is not current and not (current is None and after is before):
        state.put(after)
    return state
