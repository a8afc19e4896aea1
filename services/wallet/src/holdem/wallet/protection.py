"""Player protection (ADR 028): the operator's limits, blocks and reality checks, decided by the
wallet because it admits bets. ``check_bet`` is one more admission rule; the handlers answer
SetLimits, BlockPlayer, UnblockPlayer and AcknowledgeRealityCheck once per command id."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeAlias

from holdem.core.contracts import (
    AcknowledgeRealityCheck,
    BlockPlayer,
    Command,
    LimitKind,
    LimitsSet,
    Message,
    Mode,
    OperatorRefusal,
    PlaceBet,
    PlayerBlocked,
    PlayerUnblocked,
    PlayFreeHand,
    ProtectionRefusal,
    ProtectionRejected,
    ProtectionRejection,
    RealityCheck,
    RealityCheckAcknowledged,
    Reason,
    Rebet,
    SetLimits,
    UnblockPlayer,
)
from holdem.core.contracts.protection import Limits
from holdem.core.decider import Context
from holdem.core.limits import AdjustedBets
from holdem.wallet.admission import CALL_MULTIPLE, Refusal, Terms
from holdem.wallet.idempotency import already_decided, fingerprint
from holdem.wallet.protection_state import Play
from holdem.wallet.state import State


def check_blocked(state: State, command: PlaceBet | Rebet | PlayFreeHand) -> None:
    if command.player_id in state.protection.blocked:
        raise Refusal(
            Reason.INVALID, "the operator blocked the player", OperatorRefusal.PLAYER_BLOCKED
        )


def check_bet(state: State, command: PlaceBet | Rebet, terms: Terms, bets: AdjustedBets) -> None:
    """Refuse a real-money bet that a limit or a due reality check forbids. A bet counts what
    it may wager and lose in full (ante, bonus and the call it may make), so an admitted round
    can be played to its end within the limits."""
    exposure = bets.ante + bets.aa_bonus + CALL_MULTIPLE * bets.ante
    _check(state, command, command.table_id, terms, exposure)


def check_free_hand(
    state: State, command: PlayFreeHand, table_id: str, terms: Terms, call: int
) -> None:
    """``check_bet`` for a free hand (ADR 029) at its campaign's table: it may wager and lose
    only the call, the player's own money (the promotion pays ante and bonus)."""
    _check(state, command, table_id, terms, call)


def _check(
    state: State,
    command: PlaceBet | Rebet | PlayFreeHand,
    table_id: str | None,
    terms: Terms,
    exposure: int,
) -> None:
    protection = state.protection
    limits = protection.limits.get((command.player_id, terms.currency))
    if limits is None or terms.mode is not Mode.REAL:
        return
    at = command.occurred_at
    play = protection.play(command.player_id, table_id)
    if play is not None and reality_check_due(play, limits, at):
        assert table_id is not None
        raise _reality_check(play, table_id, at, terms.currency)
    if play is not None and limits.session_length_s is not None:
        elapsed = (at - play.started_at).total_seconds()
        if elapsed >= limits.session_length_s:
            detail = f"session {play.session_id} has lasted {elapsed:.0f}s"
            raise _limit(LimitKind.SESSION_LENGTH, limits.session_length_s, detail)
    day = protection.day(command.player_id, terms.currency, at)
    if limits.wager_per_day is not None and day.wagered + exposure > limits.wager_per_day:
        detail = f"wagered {day.wagered} on {day.day}, this bet may wager {exposure}"
        raise _limit(LimitKind.WAGER_PER_DAY, limits.wager_per_day, detail)
    if limits.loss_per_day is not None and day.lost + exposure > limits.loss_per_day:
        detail = f"lost {day.lost} on {day.day}, this bet may lose {exposure}"
        raise _limit(LimitKind.LOSS_PER_DAY, limits.loss_per_day, detail)


def reality_check_due(play: Play, limits: Limits | None, at: datetime) -> bool:
    """Whether ``reality_check_s`` has passed since the session started or was last checked."""
    every = None if limits is None else limits.reality_check_s
    return every is not None and (at - play.checked_at).total_seconds() >= every


def _limit(kind: LimitKind, limit: int, detail: str) -> Refusal:
    refusal = Refusal(
        Reason.INVALID, f"{kind.value} {limit}: {detail}", ProtectionRefusal.LIMIT_REACHED
    )
    refusal.limit = kind
    return refusal


def _reality_check(play: Play, table_id: str, at: datetime, currency: str) -> Refusal:
    check = RealityCheck(
        session_id=play.session_id,
        table_id=table_id,
        elapsed_s=max(0, int((at - play.started_at).total_seconds())),
        rounds=play.rounds,
        net=play.net,
        currency=currency,
    )
    detail = (
        f"{check.elapsed_s}s at table {check.table_id}, {check.rounds} rounds, net {check.net} "
        f"{currency}: acknowledge to play on"
    )
    refusal = Refusal(Reason.INVALID, detail, ProtectionRefusal.REALITY_CHECK)
    refusal.reality_check = check
    return refusal


# --- the operator's and the player's commands --------------------------------------------------


def _set_limits(state: State, command: SetLimits, ctx: Context) -> list[Message]:
    currency = command.limits.currency
    if (command.player_id, currency, Mode.REAL) not in state.accounts:
        return [_rejected(command, ctx, ProtectionRejection.UNKNOWN_PLAYER, f"no {currency}")]
    return [LimitsSet(**_answer(command, ctx), limits=command.limits)]


def _block(state: State, command: BlockPlayer, ctx: Context) -> list[Message]:
    if command.player_id in state.protection.blocked:
        detail = f"blocked by {state.protection.blocked[command.player_id]}"
        return [_rejected(command, ctx, ProtectionRejection.ALREADY_BLOCKED, detail)]
    return [PlayerBlocked(**_answer(command, ctx), reason=command.reason)]


def _unblock(state: State, command: UnblockPlayer, ctx: Context) -> list[Message]:
    if command.player_id not in state.protection.blocked:
        return [_rejected(command, ctx, ProtectionRejection.NOT_BLOCKED, "")]
    return [PlayerUnblocked(**_answer(command, ctx))]


def _acknowledge(state: State, command: AcknowledgeRealityCheck, ctx: Context) -> list[Message]:
    play = state.protection.play(command.player_id, command.table_id)
    limits = (
        None if play is None else state.protection.limits.get((command.player_id, play.currency))
    )
    due = (
        play is not None
        and limits is not None
        and limits.reality_check_s is not None
        and (command.occurred_at - play.checked_at).total_seconds() >= limits.reality_check_s
    )
    if play is None or not due:
        detail = f"no reality check is due at table {command.table_id}"
        return [_rejected(command, ctx, ProtectionRejection.NO_REALITY_CHECK, detail)]
    names = {"table_id": command.table_id, "session_id": play.session_id}
    return [RealityCheckAcknowledged(**_answer(command, ctx), **names)]


def _answer(command: Command, ctx: Context) -> dict[str, Any]:
    return {
        **ctx.envelope(command.player_id),
        "command_id": command.command_id,
        "fingerprint": fingerprint(command),
    }


def _rejected(
    command: Command, ctx: Context, reason: ProtectionRejection, detail: str
) -> ProtectionRejected:
    return ProtectionRejected(
        **_answer(command, ctx),
        command_type=str(getattr(command, "type", "")),
        reason=reason,
        detail=detail[:500],
    )


_Decide: TypeAlias = Callable[[State, Any, Context], list[Message]]
_DECIDE: dict[type[Command], _Decide] = {
    SetLimits: _set_limits,
    BlockPlayer: _block,
    UnblockPlayer: _unblock,
    AcknowledgeRealityCheck: _acknowledge,
}


def decide_protection(state: State, command: Any, ctx: Context, tables: object) -> list[Message]:
    """The answer to a protection command: nothing for the same command again, a typed
    refusal for a reused id or one outside the window, else its handler's."""
    try:
        if already_decided(state, command, ctx):
            return []
    except Refusal as refusal:
        reason = ProtectionRejection.DUPLICATE
        if refusal.reason is not Reason.DUPLICATE:
            reason = ProtectionRejection.INVALID
        return [_rejected(command, ctx, reason, refusal.detail)]
    return _DECIDE[type(command)](state, command, ctx)


PROTECTION_HANDLERS: dict[type[Message], Callable[[State, Any, Context, Any], list[Message]]] = (
    dict.fromkeys(_DECIDE, decide_protection)
)
