"""The operator's player-protection commands (ADR 028), part of ``Operator``: a player's limits,
blocking and unblocking him, ending a session with a reason. Each awaits its answer; a refusal
raises ``ProtectionRefused`` (``ProtectionRejected`` or ``SessionRejected``: ``reason`` is its
stable code)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from holdem.client.commands import command
from holdem.client.watch import Watch
from holdem.core.contracts import (
    BlockPlayer,
    Command,
    EndSession,
    LimitsSet,
    Message,
    OperatorEndReason,
    PlayerBlocked,
    PlayerUnblocked,
    ProtectionRejected,
    SessionEnded,
    SessionRejected,
    SetLimits,
    UnblockPlayer,
)
from holdem.core.contracts.protection import Limits

ANSWER_S = 60.0


class ProtectionRefused(Exception):
    """A protection command or an EndSession the game refused; ``reason`` is the code."""

    def __init__(self, event: ProtectionRejected | SessionRejected) -> None:
        super().__init__(f"{event.type}: {event.reason.value} {event.detail}".strip())
        self.event = event
        self.reason = event.reason


class ProtectionCommands:
    """What ``Operator`` can do to protect a player; it sends, watches and forgets."""

    if TYPE_CHECKING:

        def watch(self, key: str) -> Watch: ...
        def forget(self, key: str) -> None: ...
        async def send(self, command: Command, *, brand: str | None = None) -> None: ...

    async def set_limits(
        self,
        player_id: str,
        currency: str = "EUR",
        *,
        wager_per_day: int | None = None,
        loss_per_day: int | None = None,
        session_length_s: int | None = None,
        reality_check_s: int | None = None,
        command_id: str | None = None,
    ) -> LimitsSet:
        """Replace the player's limits in ``currency`` (None: no such limit). Wager and loss
        are per UTC day in minor units; refused ``unknown_player`` without an account there."""
        limits = Limits(
            currency=currency,
            wager_per_day=wager_per_day,
            loss_per_day=loss_per_day,
            session_length_s=session_length_s,
            reality_check_s=reality_check_s,
        )
        answer = await self.ask(command(SetLimits, player_id, command_id=command_id, limits=limits))
        assert isinstance(answer, LimitsSet)
        return answer

    async def block(
        self, player_id: str, reason: str = "operator", *, command_id: str | None = None
    ) -> PlayerBlocked:
        """No new bet from the player; his open sessions end and the round waiting for his
        decision is finished by its table's policy."""
        block = command(BlockPlayer, player_id, command_id=command_id, reason=reason)
        answer = await self.ask(block)
        assert isinstance(answer, PlayerBlocked)
        return answer

    async def unblock(self, player_id: str, *, command_id: str | None = None) -> PlayerUnblocked:
        answer = await self.ask(command(UnblockPlayer, player_id, command_id=command_id))
        assert isinstance(answer, PlayerUnblocked)
        return answer

    async def end_session(
        self,
        player_id: str,
        table_id: str,
        reason: OperatorEndReason = OperatorEndReason.TERMINATED,
        *,
        command_id: str | None = None,
    ) -> SessionEnded:
        """End the player's session at ``table_id`` at once, for ``reason``; a round of it
        waiting for his decision is finished by the table's policy."""
        fields: dict[str, Any] = {"table_id": table_id, "reason": reason, "version": 2}
        answer = await self.ask(command(EndSession, player_id, command_id=command_id, **fields))
        assert isinstance(answer, SessionEnded)
        return answer

    async def ask(self, cmd: Command, within_s: float = ANSWER_S) -> Message:
        """Send ``cmd`` and await the answer to its command_id; a refusal is raised."""
        watch = self.watch(f"command:{cmd.command_id}")
        refusals = (ProtectionRejected, SessionRejected)
        answers = (LimitsSet, PlayerBlocked, PlayerUnblocked, SessionEnded, *refusals)
        try:
            await self.send(cmd)
            answer = await watch.until(*answers, within_s=within_s)
        finally:
            self.forget(watch.key)
        if isinstance(answer, ProtectionRejected | SessionRejected):
            raise ProtectionRefused(answer)
        return answer
