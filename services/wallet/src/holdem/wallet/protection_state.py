"""What the wallet remembers to protect players (ADR 028): their limits, who is blocked, each
player's real-money totals of the current UTC day, and each session at a table as the wallet
sees it (its start, its last reality check, its rounds and net result), folded from its own
events and the dealer's session events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Final

from pydantic import AwareDatetime, NonNegativeInt

from holdem.core.contracts import (
    BetPlaced,
    CallCaptured,
    LimitsSet,
    Mode,
    PayoutCredited,
    PlayerBlocked,
    PlayerUnblocked,
    RealityCheckAcknowledged,
    SessionEnded,
    SessionStarted,
    StakesRefunded,
    StakeTaken,
)
from holdem.core.contracts.promotions import FreeStakeTaken
from holdem.core.contracts.protection import Limits
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.decider import ByClass

ROUNDS_OPEN_KEPT: Final = 16  # a session's rounds whose money may still move (one seat: 1-2)
# How each movement changes the player's result (returns minus stakes), per unit of amount.
RESULT: Final[dict[type[WalletEvent], int]] = {
    StakeTaken: -1,
    CallCaptured: -1,
    PayoutCredited: 1,
    StakesRefunded: 1,
}
# ... and what he wagered: a refund takes a voided round's stakes back out of the day.
WAGERED: Final[dict[type[WalletEvent], int]] = {StakeTaken: 1, CallCaptured: 1, StakesRefunded: -1}


def utc_day(at: datetime) -> date:
    return at.astimezone(UTC).date()


@dataclass(slots=True)
class Day:
    """A player's real-money totals in one currency on one UTC day; ``lost`` is net of wins
    (negative when he is ahead)."""

    day: date
    wagered: NonNegativeInt = 0
    lost: int = 0


@dataclass(slots=True)
class Play:
    """The player's open session at a table: when it started, when he last acknowledged a
    reality check (its start until then), the rounds bet in it and its net result."""

    session_id: str
    currency: str
    started_at: AwareDatetime
    checked_at: AwareDatetime
    rounds: NonNegativeInt = 1
    net: int = 0
    moving: list[str] = field(default_factory=list)  # its rounds whose money may still move


@dataclass(slots=True)
class Protection:
    limits: dict[tuple[str, str], Limits] = field(default_factory=dict)  # (player, currency)
    blocked: dict[str, str] = field(default_factory=dict)  # player -> the BlockPlayer's command
    days: dict[tuple[str, str], Day] = field(default_factory=dict)  # (player, currency)
    plays: dict[tuple[str, str], Play] = field(default_factory=dict)  # (player, table)
    of_round: dict[str, tuple[str, str]] = field(default_factory=dict)  # round -> its play

    def day(self, player_id: str, currency: str, at: datetime) -> Day:
        """The player's totals on ``at``'s UTC day (nothing yet if the last ones are older)."""
        found = self.days.get((player_id, currency))
        today = utc_day(at)
        return found if found is not None and found.day == today else Day(today)

    def play(self, player_id: str, table_id: str | None) -> Play | None:
        return None if table_id is None else self.plays.get((player_id, table_id))


def fold_protection(
    p: Protection, event: object, first: tuple[str, int] | None = None, free: int = 0
) -> None:
    """Fold a protection record (once: the caller skips a command already remembered), a
    session event, a bet, or a money movement newly applied. ``first``: for SessionStarted, the
    currency of its first round and what that round has taken so far of the player's own money
    (its stakes, moved before the dealer started the session). ``free``: for a BetPlaced, what
    a promotion paid of its stakes if the wallet knows it already (a free hand, ADR 029)."""
    _fold_of(event)(p, event, first, free)


def _end_session(p: Protection, event: SessionEnded, first: object, free: object) -> None:
    _end(p, event)


def _bet_counted(p: Protection, event: BetPlaced, first: object, free: int) -> None:
    _bet(p, event, free)


def _move_counted(p: Protection, event: WalletEvent, first: object, free: object) -> None:
    _moved(p, event)


def _nothing(p: Protection, event: object, first: object, free: object) -> None:
    """Any other message: nothing to protect."""


def _limits(p: Protection, event: LimitsSet, first: object, free: object) -> None:
    key = (event.player_id, event.limits.currency)
    p.limits[key] = event.limits
    p.days.setdefault(key, Day(utc_day(event.occurred_at)))  # counted from now on


def _blocked(p: Protection, event: PlayerBlocked, first: object, free: object) -> None:
    p.blocked[event.player_id] = event.command_id


def _unblocked(p: Protection, event: PlayerUnblocked, first: object, free: object) -> None:
    p.blocked.pop(event.player_id, None)


def _checked(p: Protection, event: RealityCheckAcknowledged, first: object, free: object) -> None:
    play = p.plays.get((event.player_id, event.table_id))
    if play is not None and play.session_id == event.session_id:
        play.checked_at = max(play.checked_at, event.occurred_at)


def _started(
    p: Protection, event: SessionStarted, first: tuple[str, int] | None, free: object
) -> None:
    _start(p, event, first or ("", 0))


def _start(p: Protection, event: SessionStarted, first: tuple[str, int]) -> None:
    key = (event.player_id, event.table_id)
    current = p.plays.get(key)
    if current is not None and current.session_id == event.session_id:
        return  # read again
    if current is not None:
        _drop(p, key)
    currency, taken = first
    at = event.occurred_at
    p.plays[key] = Play(event.session_id, currency, at, at, net=-taken, moving=[event.round_id])
    p.of_round[event.round_id] = key


def _end(p: Protection, event: SessionEnded) -> None:
    key = (event.player_id, event.table_id)
    current = p.plays.get(key)
    if current is not None and current.session_id == event.session_id:
        _drop(p, key)


def _drop(p: Protection, key: tuple[str, str]) -> None:
    for round_id in p.plays.pop(key).moving:
        p.of_round.pop(round_id, None)


def _bet(p: Protection, event: BetPlaced, free: int) -> None:
    """A bet at a table whose session is open counts in it (a session's first bet is counted
    by its SessionStarted, which the dealer writes after it). A free hand's stakes are the
    promotion's: ``free`` of them, or its FreeStakeTaken folded after, gives them back."""
    if event.table_id is None or event.round_id in p.of_round:
        return
    key = (event.player_id, event.table_id)
    play = p.plays.get(key)
    if play is None:
        return
    play.rounds += 1
    # Its stakes count here, not at its StakeTaken: written in the same transaction, the two
    # may replay in either order (ADR 019 breaks a timestamp tie by topic, ledger first).
    play.net -= event.ante + event.aa_bonus - free
    play.moving.append(event.round_id)
    p.of_round[event.round_id] = key
    while len(play.moving) > ROUNDS_OPEN_KEPT:
        p.of_round.pop(play.moving.pop(0), None)


def _moved(p: Protection, event: WalletEvent) -> None:
    kind = type(event)
    if kind is FreeStakeTaken:  # after its BetPlaced (else that one knew it): not his money
        _free_stake(p, event)
        return
    if event.round_id is None or kind not in RESULT:
        return
    key = (event.player_id, event.currency)
    if event.mode is Mode.REAL and key in p.limits:  # a day is counted for a limited player
        day = p.day(event.player_id, event.currency, event.occurred_at)
        day.wagered = max(0, day.wagered + WAGERED.get(kind, 0) * event.amount)
        day.lost -= RESULT[kind] * event.amount
        p.days[key] = day
    where = p.of_round.get(event.round_id)
    play = None if where is None else p.plays.get(where)
    if play is None or where is None or where[0] != event.player_id:
        return
    if kind is not StakeTaken:  # counted with its BetPlaced
        play.net += RESULT[kind] * event.amount
    if kind is PayoutCredited or kind is StakesRefunded:  # its money has stopped moving
        play.moving.remove(event.round_id)
        del p.of_round[event.round_id]


def _free_stake(p: Protection, event: WalletEvent) -> None:
    where = None if event.round_id is None else p.of_round.get(event.round_id)
    play = None if where is None else p.plays.get(where)
    if play is not None and where is not None and where[0] == event.player_id:
        play.net += event.amount


# The branch of ``fold_protection`` for each message class (chosen once per class, in order).
_fold_of: ByClass[Callable[[Protection, Any, Any, int], None]] = ByClass(
    [
        (LimitsSet, _limits),
        (PlayerBlocked, _blocked),
        (PlayerUnblocked, _unblocked),
        (RealityCheckAcknowledged, _checked),
        (SessionStarted, _started),
        (SessionEnded, _end_session),
        (BetPlaced, _bet_counted),
        (WalletEvent, _move_counted),
    ],
    _nothing,
)
