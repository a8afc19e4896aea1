"""The sessions half of the audit (ADR 020): each session started and ended at most once, by its
own player; every round carrying a session id names a session started before it; every dealt
round of an ended session decided exactly once (the decision that finished it, or the player's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from holdem.core.contracts import Called, Dealt, Folded, RoundVoided, SessionEnded, SessionStarted
from holdem.harness.audit_window import KEPT, Window

_TALLIED = (Called, Folded, RoundVoided)  # a round's decision or void, tallied in its session


def session_violations(records: Iterable[Any]) -> list[str]:
    """Broken session invariants, as sentences. ``records``: the audit's ``Record``s."""
    watch = SessionWatch()
    for r in sorted(records, key=lambda r: (r.role, r.partition, r.offset)):
        if r.role == "rounds" and r.message is not None:
            watch.feed(r.message)
    return watch.finish()


@dataclass
class Session:
    owner: str | None = None
    started: int = 0
    ended: int = 0


@dataclass
class Tally:
    """A dealt round of a session: its decisions and voids so far."""

    session_id: str
    decided: int = 0
    voided: int = 0


class SessionWatch:
    """The sessions audit one rounds record at a time (a player's in partition order). Open
    sessions are held until they end, ended ones in an exact window of the latest (a session
    started or ended again within it is named). A session's dealt rounds are held in an exact
    window of the latest rounds, each judged when it leaves it, against its session as it is
    then (a decision may follow the end that forced it): the state held is bounded by the
    windows, not by the length of a session or of the log."""

    # The types ``feed`` acts on (see ForcedWatch.READS).
    READS: tuple[type, ...] = (SessionStarted, SessionEnded, Dealt, *_TALLIED)

    def __init__(self, kept: int = KEPT) -> None:
        self.open: dict[str, Session] = {}
        self.ended: Window[str, Session] = Window(kept, self._judge)
        self.rounds: Window[str, Tally] = Window(kept, self._judge_round)
        self.found: list[str] = []

    def _session(self, session_id: str) -> Session:
        return self.open.get(session_id) or self.ended.get(session_id) or Session()

    def feed(self, e: Any) -> None:
        if isinstance(e, SessionStarted):
            s = self._session(e.session_id)
            s.started += 1
            s.owner = s.owner or e.player_id
            if s.ended:
                self.ended.put(e.session_id, s)
            else:
                self.open[e.session_id] = s
        elif isinstance(e, SessionEnded):
            s = self._session(e.session_id)
            self.open.pop(e.session_id, Session())
            s.ended += 1
            if s.owner is not None and s.owner != e.player_id:
                self.found.append(
                    f"session {e.session_id}: ended by {e.player_id}, started by {s.owner}"
                )
            self.ended.put(e.session_id, s)
        elif isinstance(e, Dealt) and e.session_id is not None:
            s = self._session(e.session_id)
            if s.owner != e.player_id:
                self.found.append(
                    f"{e.player_id}/{e.round_id}: dealt in session {e.session_id}, "
                    "not one of its player's"
                )
                return
            if e.round_id not in self.rounds:
                self.rounds.put(e.round_id, Tally(e.session_id))
        elif isinstance(e, _TALLIED):
            tally = self.rounds.get(e.round_id)
            if tally is not None:
                if isinstance(e, RoundVoided):
                    tally.voided += 1
                else:
                    tally.decided += 1

    def _judge(self, session_id: str, s: Session) -> None:
        if s.started > 1:
            self.found.append(f"session {session_id}: started {s.started} times")
        if s.ended > 1:
            self.found.append(f"session {session_id}: ended {s.ended} times")
        if s.ended and not s.started:
            self.found.append(f"session {session_id}: ended, never started")

    def _judge_round(self, round_id: str, tally: Tally) -> None:
        s = self._session(tally.session_id)
        times = tally.decided
        if s.ended and (times > 1 or (times == 0 and not tally.voided)):
            self.found.append(
                f"{s.owner}/{round_id}: its session ended and it was decided {times} times"
            )

    def finish(self) -> list[str]:
        self.rounds.drain()  # judged against their sessions' last state, before those are
        for session_id, s in list(self.open.items()):
            self._judge(session_id, s)
        self.open.clear()
        self.ended.drain()
        return self.found
