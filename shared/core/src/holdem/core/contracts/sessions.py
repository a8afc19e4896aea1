"""Sessions (ADR 020): a player's stay at a table, from his first bet there to an explicit end
(``EndSession``) or the table's idle timeout. The dealer decides them; its events go to
``holdem.rounds``, keyed by ``player_id`` like the rounds they group."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Literal

from pydantic import Field

from holdem.core.contracts.base import Command, Id, Message, Mode
from holdem.core.contracts.tables import MAX_IDLE_TIMEOUT_S


class EndSession(Command):
    """The operator ends the player's open session at ``table_id``; a round of it still waiting
    for the player's decision is finished at once by its table's timeout policy."""

    type: Literal["command.end_session"] = "command.end_session"
    version: Literal[1] = 1
    table_id: Id


class SessionEndReason(StrEnum):
    ENDED = "ended"  # an EndSession
    IDLE_TIMEOUT = "idle_timeout"  # no command from the player at the table for idle_timeout_s


class SessionRefusal(StrEnum):
    """Why an EndSession was refused; nothing changed."""

    NO_SESSION = "no_session"  # the player has no open session at that table
    DUPLICATE = "duplicate"  # the command_id was used for another command


class SessionEvent(Message):
    TOPIC: ClassVar[str] = "rounds"
    session_id: Id
    table_id: Id


class SessionStarted(SessionEvent):
    """The player's first bet at the table with no session open there (``round_id``,
    ``command_id``: that bet's). ``idle_timeout_s``: the table's idle timeout, pinned for the
    session's whole life."""

    type: Literal["round.session_started"] = "round.session_started"
    version: Literal[1] = 1
    round_id: Id
    command_id: Id
    mode: Mode = Mode.REAL
    idle_timeout_s: int = Field(strict=True, ge=1, le=MAX_IDLE_TIMEOUT_S)


class SessionEnded(SessionEvent):
    """The session is over; its rounds still waiting for a decision are finished by their
    table's policy in the same transaction. ``command_id``: the EndSession behind it."""

    type: Literal["round.session_ended"] = "round.session_ended"
    version: Literal[1] = 1
    reason: SessionEndReason
    command_id: Id | None = None


class SessionRejected(Message):
    """An EndSession the dealer refused; nothing changed."""

    TOPIC: ClassVar[str] = "rounds"
    type: Literal["round.session_rejected"] = "round.session_rejected"
    version: Literal[1] = 1
    command_id: Id
    table_id: Id
    reason: SessionRefusal
    detail: str = Field(default="", max_length=500)
