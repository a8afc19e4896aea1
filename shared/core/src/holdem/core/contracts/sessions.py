"""Sessions (ADR 020): a player's stay at a table, from his first bet there to an explicit end
(``EndSession``) or the table's idle timeout. The dealer decides them; its events go to
``holdem.rounds``, keyed by ``player_id`` like the rounds they group."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from holdem.core.contracts.base import Command, Id, Message, Mode
from holdem.core.contracts.tables import MAX_IDLE_TIMEOUT_S


class OperatorEndReason(StrEnum):
    """Why the operator ends a session (EndSession v2, ADR 028)."""

    TERMINATED = "terminated"  # the operator's TerminateSession: the player is sent away
    BLOCKED = "blocked"  # the player was blocked (self-exclusion, the operator's decision)
    LIMIT = "limit"  # one of the player's limits was reached


class SessionEndReason(StrEnum):
    ENDED = "ended"  # an EndSession v1
    IDLE_TIMEOUT = "idle_timeout"  # no command from the player at the table for idle_timeout_s
    # v2 of round.session_ended (ADR 028): an EndSession v2's reason; ``blocked`` also for the
    # sessions a BlockPlayer ends
    TERMINATED = "terminated"
    BLOCKED = "blocked"
    LIMIT = "limit"


class EndSession(Command):
    """The operator ends the player's open session at ``table_id``; a round of it still waiting
    for the player's decision is finished at once by its table's timeout policy.

    v2: the operator's ``reason`` (ADR 028: ``terminated``, ``blocked``, ``limit``); a v1
    command ends the session ``ended``."""

    OWNER: ClassVar[str] = "dealer"
    type: Literal["command.end_session"] = "command.end_session"
    version: Literal[1, 2] = 2
    table_id: Id
    reason: OperatorEndReason | None = None

    @model_validator(mode="after")
    def _reason_matches_version(self) -> EndSession:
        if "version" not in self.model_fields_set and self.reason is None:
            object.__setattr__(self, "version", 1)  # a v1 client that leaves out the version
        if self.version == 1 and self.reason is not None:
            raise ValueError("a v1 EndSession has no reason (send version 2)")
        if self.version == 2 and self.reason is None:
            raise ValueError("a v2 EndSession names its reason")
        return self


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
    table's policy in the same transaction. ``command_id``: the EndSession (or BlockPlayer)
    behind it. v2: the reasons ``terminated``, ``blocked``, ``limit`` (ADR 028)."""

    type: Literal["round.session_ended"] = "round.session_ended"
    version: Literal[1, 2] = 2
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
