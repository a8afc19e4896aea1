"""The sessions half of the audit (ADR 020): each session started and ended at most once, by its
own player; every round carrying a session id names a session started before it; every dealt
round of an ended session decided exactly once (the decision that finished it, or the player's).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from holdem.core.contracts import Called, Dealt, Folded, RoundVoided, SessionEnded, SessionStarted


def session_violations(records: Iterable[Any]) -> list[str]:
    """Broken session invariants, as sentences. ``records``: the audit's ``Record``s."""
    events = [
        r.message
        for r in sorted(records, key=lambda r: (r.role, r.partition, r.offset))
        if r.role == "rounds" and r.message is not None
    ]
    started = Counter(e.session_id for e in events if isinstance(e, SessionStarted))
    ended = Counter(e.session_id for e in events if isinstance(e, SessionEnded))
    owner = {e.session_id: e.player_id for e in events if isinstance(e, SessionStarted)}
    found = [f"session {s}: started {n} times" for s, n in started.items() if n > 1]
    found += [f"session {s}: ended {n} times" for s, n in ended.items() if n > 1]
    found += [f"session {s}: ended, never started" for s in ended if s not in started]
    found += [
        f"session {e.session_id}: ended by {e.player_id}, started by {owner[e.session_id]}"
        for e in events
        if isinstance(e, SessionEnded) and owner.get(e.session_id, e.player_id) != e.player_id
    ]
    decided = Counter(e.round_id for e in events if isinstance(e, Called | Folded))
    voided = {e.round_id for e in events if isinstance(e, RoundVoided)}  # a void is its end
    for dealt in events:
        if not isinstance(dealt, Dealt) or dealt.session_id is None:
            continue
        name, session = f"{dealt.player_id}/{dealt.round_id}", dealt.session_id
        if owner.get(session) != dealt.player_id:
            found.append(f"{name}: dealt in session {session}, not one of its player's")
        elif session in ended:
            times = decided[dealt.round_id]
            if times > 1 or (times == 0 and dealt.round_id not in voided):
                found.append(f"{name}: its session ended and it was decided {times} times")
    return found
