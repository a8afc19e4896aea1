"""The wallet's pure decisions: bets, deposits, withdrawals, and the money side of each round."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from holdem.core.contracts import (
    BetPlaced,
    BetRejected,
    CallCaptured,
    Called,
    CallHeld,
    CallReleased,
    Command,
    Deposit,
    Folded,
    FundsDeposited,
    FundsWithdrawn,
    Message,
    PayoutCredited,
    PlaceBet,
    Reason,
    RoundVoided,
    Settled,
    StakesRefunded,
    StakeTaken,
    WalletRejected,
    Withdraw,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.decider import Context
from holdem.core.errors import BetBelowMinimumError
from holdem.core.limits import AdjustedBets, TableLimits, auto_adjust
from holdem.wallet.state import DELTAS, AccountKey, Stake, State

CALL_MULTIPLE = 2  # the call is exactly 2 × ante (RULES.md), so a bet holds that much back
MAX_BALANCE = 10**15  # the contracts' Balance bound: a deposit beyond it could not be reported
_ENVELOPE = {"event_id", "occurred_at", "causation_id", "correlation_id", "command_id"}


@dataclass(frozen=True, slots=True)
class Table:
    """The table the wallet takes bets for: its currency and limits (minor units)."""

    currency: str
    limits: TableLimits


class Refusal(Exception):
    """A command the wallet turns down; carried up to the handler that writes the rejection."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


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


def decide(state: State, message: Message, ctx: Context, *, table: Table) -> list[Message]:
    """The events the wallet publishes in answer to one command or round event."""
    handler = _HANDLERS.get(type(message))
    return handler(state, message, ctx, table) if handler is not None else []


def bind(table: Table) -> Callable[[State, Message, Context], list[Message]]:
    """``decide`` for one table, in the shape the runtime calls."""

    def decide_for_table(state: State, message: Message, ctx: Context) -> list[Message]:
        return decide(state, message, ctx, table=table)

    return decide_for_table


class _Ledger:
    """One account's running balances within a decision, so each event states the balances
    after its own movement (the same deltas ``evolve`` applies)."""

    def __init__(self, state: State, key: AccountKey, ctx: Context) -> None:
        self.player_id, self.currency, self.mode = key
        account = state.account(key)
        self.available, self.held = account.available, account.held
        self.ctx = ctx

    def move(
        self, model: type[WalletEvent], key: str, amount: int, round_id: str | None, **extra: Any
    ) -> WalletEvent:
        d_available, d_held, _ = DELTAS[model]
        self.available += d_available * amount
        self.held += d_held * amount
        return model(
            **self.ctx.envelope(self.player_id, round_id),
            idempotency_key=key,
            currency=self.currency,
            mode=self.mode,
            amount=amount,
            available=self.available,
            held=self.held,
            **extra,
        )


# --- commands -------------------------------------------------------------------------------


def _seen(state: State, command: Command) -> str | None:
    """The fingerprint recorded for this command_id, or None for a new command."""
    return state.commands.get((command.player_id, command.command_id))


def _wallet_rejected(command: Command, ctx: Context, refusal: Refusal) -> WalletRejected:
    return WalletRejected(
        **ctx.envelope(command.player_id, command.round_id),
        command_id=command.command_id,
        command_type=str(getattr(command, "type", "")),
        reason=refusal.reason,
        detail=refusal.detail,
        fingerprint=fingerprint(command),
    )


def _check_duplicate(state: State, command: Command) -> bool:
    """True if this exact command was already decided; raise if its id was used for another."""
    seen = _seen(state, command)
    if seen is None:
        return False
    if seen != fingerprint(command):
        raise Refusal(
            Reason.DUPLICATE, f"command_id {command.command_id} was used for another body"
        )
    return True


def _place_bet(state: State, command: PlaceBet, ctx: Context, table: Table) -> list[Message]:
    try:
        if _check_duplicate(state, command):
            return []
        bets = _admit(state, command, table)
    except Refusal as refusal:
        rejected = BetRejected(
            **ctx.envelope(command.player_id, command.round_id),
            command_id=command.command_id,
            reason=refusal.reason,
            detail=refusal.detail,
        )
        # The wallet folds only its own topic: WalletRejected is how it remembers the answer.
        return [rejected, _wallet_rejected(command, ctx, refusal)]
    return _take_stakes(state, command, ctx, bets)


def _admit(state: State, command: PlaceBet, table: Table) -> AdjustedBets:
    """The bets as the table accepts them, or the Refusal that says why not."""
    if command.round_id in state.rounds:
        raise Refusal(Reason.ROUND_EXISTS, f"round {command.round_id} already has a bet")
    if command.currency != table.currency:
        raise Refusal(Reason.UNSUPPORTED_CURRENCY, f"this table plays in {table.currency}")
    try:
        bets = auto_adjust(command.ante, command.aa_bonus, table.limits)
    except BetBelowMinimumError as error:
        raise Refusal(Reason.BELOW_MINIMUM, str(error)) from None
    open_round = state.open_rounds.get(command.player_id)
    if open_round is not None:
        raise Refusal(Reason.ROUND_IN_PROGRESS, f"round {open_round} awaits its decision")
    needed = bets.ante + bets.aa_bonus + CALL_MULTIPLE * bets.ante
    available = state.account((command.player_id, command.currency, command.mode)).available
    if available < needed:
        raise Refusal(Reason.INSUFFICIENT_FUNDS, f"needs {needed}, available {available}")
    return bets


def _take_stakes(
    state: State, command: PlaceBet, ctx: Context, bets: AdjustedBets
) -> list[Message]:
    round_id, call_hold = command.round_id, CALL_MULTIPLE * bets.ante
    # BetPlaced goes first: should the events ever not be one transaction, a crash after it is
    # redelivered and decided again, while a crash after StakeTaken would leave no round.
    placed = BetPlaced(
        **ctx.envelope(command.player_id, round_id),
        command_id=command.command_id,
        currency=command.currency,
        mode=command.mode,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        call_hold=call_hold,
        requested_ante=command.ante,
        requested_aa_bonus=command.aa_bonus,
        adjusted=bets.adjusted,
    )
    ledger = _Ledger(state, (command.player_id, command.currency, command.mode), ctx)
    stake = ledger.move(
        StakeTaken,
        f"stake:{round_id}",
        bets.ante + bets.aa_bonus,
        round_id,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        command_id=command.command_id,
        fingerprint=fingerprint(command),
    )
    return [placed, stake, ledger.move(CallHeld, f"hold:{round_id}", call_hold, round_id)]


def _deposit(state: State, command: Deposit, ctx: Context, table: Table) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if _check_duplicate(state, command):
            return []
        if state.account(key).available + command.amount > MAX_BALANCE:
            raise Refusal(Reason.INVALID, f"the balance would exceed {MAX_BALANCE}")
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = _Ledger(state, key, ctx)
    return [_command_move(ledger, FundsDeposited, "deposit", command)]


def _withdraw(state: State, command: Withdraw, ctx: Context, table: Table) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if _check_duplicate(state, command):
            return []
        available = state.account(key).available
        if available < command.amount:
            raise Refusal(Reason.INSUFFICIENT_FUNDS, f"available {available}")
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = _Ledger(state, key, ctx)
    return [_command_move(ledger, FundsWithdrawn, "withdraw", command)]


def _command_move(
    ledger: _Ledger, model: type[WalletEvent], prefix: str, command: Deposit | Withdraw
) -> WalletEvent:
    return ledger.move(
        model,
        f"{prefix}:{command.command_id}",
        command.amount,
        None,
        command_id=command.command_id,
        fingerprint=fingerprint(command),
    )


# --- round events ---------------------------------------------------------------------------


def _open_stake(state: State, message: Message) -> Stake | None:
    """The player's stake in this round, if the round is neither paid nor refunded."""
    stake = state.round_of(message.player_id, message.round_id)
    return stake if stake is not None and stake.status == "open" else None


def _resolve_call(stake: Stake, ledger: _Ledger, round_id: str, capture: bool) -> list[Message]:
    """Capture or release a still-held call; nothing if it was already resolved."""
    if stake.call != "held":
        return []
    if capture:
        return [ledger.move(CallCaptured, f"capture:{round_id}", stake.call_hold, round_id)]
    return [ledger.move(CallReleased, f"release:{round_id}", stake.call_hold, round_id)]


def _on_decision(state: State, event: Called | Folded, ctx: Context, table: Table) -> list[Message]:
    stake = _open_stake(state, event)
    if stake is None:
        return []
    ledger = _Ledger(state, stake.account, ctx)
    return _resolve_call(stake, ledger, event.round_id, capture=isinstance(event, Called))


def _on_settled(state: State, event: Settled, ctx: Context, table: Table) -> list[Message]:
    stake = _open_stake(state, event)
    if stake is None:
        return []
    ledger = _Ledger(state, stake.account, ctx)
    # Called/Folded precede Settled on the round's partition, so this only matters if the
    # decision event was never seen: a payout must not leave the call hanging.
    events = _resolve_call(stake, ledger, event.round_id, capture=event.decision == "call")
    if event.total_return > 0:
        key = f"payout:{event.round_id}"
        events.append(ledger.move(PayoutCredited, key, event.total_return, event.round_id))
    return events


def _on_voided(state: State, event: RoundVoided, ctx: Context, table: Table) -> list[Message]:
    stake = _open_stake(state, event)
    if stake is None:
        return []
    ledger = _Ledger(state, stake.account, ctx)
    events = _resolve_call(stake, ledger, event.round_id, capture=False)
    key = f"refund:{event.round_id}"
    events.append(ledger.move(StakesRefunded, key, stake.taken, event.round_id))
    return events


_Handler: TypeAlias = Callable[[State, Any, Context, Table], list[Message]]
_HANDLERS: dict[type[Message], _Handler] = {
    PlaceBet: _place_bet,
    Deposit: _deposit,
    Withdraw: _withdraw,
    Called: _on_decision,
    Folded: _on_decision,
    Settled: _on_settled,
    RoundVoided: _on_voided,
}
