"""The wallet's command-id bookkeeping, shared by both modes (ADR 010): what a command asks for
(its fingerprint), whether its command_id was answered before (for this body or another), the
window outside which the wallet can no longer tell, and the records by which it remembers a
refusal (``WalletRejected``: the wallet folds only its own topic)."""

from __future__ import annotations

import hashlib
import json

from holdem.core.contracts import (
    BetRejected,
    Command,
    Message,
    PlaceBet,
    Reason,
    Rebet,
    WalletRejected,
)
from holdem.core.decider import Context
from holdem.wallet.admission import Refusal
from holdem.wallet.state import CLOCK_AHEAD, State

_ENVELOPE = {"event_id", "occurred_at", "causation_id", "correlation_id", "command_id"}


def fingerprint(command: Command) -> str:
    """A digest of what a command asks for (its type and body, not its envelope or id).

    >>> from holdem.core.contracts import Deposit
    >>> fields = dict(player_id="p1", occurred_at="2026-01-01T00:00:00Z", currency="EUR")
    >>> a = Deposit(event_id="e1", command_id="c1", amount=5, **fields)
    >>> b = Deposit(event_id="e2", command_id="c2", amount=5, **fields)
    >>> fingerprint(a) == fingerprint(b), len(fingerprint(a))
    (True, 32)
    """
    body = command.model_dump(mode="json", exclude=_ENVELOPE)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def already_decided(state: State, command: Command, ctx: Context) -> bool:
    """True if this exact command was already decided; raise Refusal if its id was used for
    another body, or if it is too old for the wallet to know whether it was (ADR 010)."""
    seen = state.commands.get((command.player_id, command.command_id))
    if seen is None:
        check_window(state, command, ctx)
        return False
    if seen != fingerprint(command):
        raise Refusal(
            Reason.DUPLICATE, f"command_id {command.command_id} was used for another body"
        )
    return True


def check_window(state: State, command: Command, ctx: Context) -> None:
    """Refuse a command the wallet cannot tell from one it has forgotten. Every command it
    answered had ``occurred_at`` at most CLOCK_AHEAD past the time of its answer, so one not
    after ``horizon + CLOCK_AHEAD`` (the player's newest forgotten answer) may be a resend of a
    forgotten command: applying it could take a stake or move money twice."""
    if command.occurred_at > ctx.now + CLOCK_AHEAD:
        ahead = (command.occurred_at - ctx.now).total_seconds()
        raise Refusal(Reason.INVALID, f"occurred_at is {ahead:.0f}s ahead of the wallet's clock")
    horizon = state.horizon.get(command.player_id)
    if horizon is not None and command.occurred_at <= horizon + CLOCK_AHEAD:
        raise Refusal(
            Reason.INVALID,
            f"occurred_at is older than this player's idempotency window "
            f"(commands after {(horizon + CLOCK_AHEAD).isoformat()})",
        )


def wallet_rejected(
    command: Command, ctx: Context, refusal: Refusal, digest: str | None = None
) -> WalletRejected:
    """The wallet's own record of a refusal: what answers the command_id if it comes again."""
    return WalletRejected(
        **ctx.envelope(command.player_id, command.round_id),
        command_id=command.command_id,
        command_type=str(getattr(command, "type", "")),
        reason=refusal.reason,
        detail=refusal.detail,
        fingerprint=digest or fingerprint(command),
    )


def bet_refused(
    command: PlaceBet | Rebet, ctx: Context, refusal: Refusal, digest: str | None = None
) -> list[Message]:
    """The answer to a bet the wallet turns down: to the player, and for its own memory
    (``digest``: the command's fingerprint when it was taken before, seamless mode)."""
    rejected = BetRejected(
        **ctx.envelope(command.player_id, command.round_id),
        command_id=command.command_id,
        reason=refusal.bet_reason,
        detail=refusal.detail,
        limit=refusal.limit,
        reality_check=refusal.reality_check,
    )
    return [rejected, wallet_rejected(command, ctx, refusal, digest)]
