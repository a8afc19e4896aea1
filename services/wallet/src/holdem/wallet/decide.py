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
    CallHeld,
    Command,
    Deposit,
    FundsDeposited,
    FundsWithdrawn,
    Message,
    PlaceBet,
    Reason,
    StakeTaken,
    WalletRejected,
    Withdraw,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.decider import Context
from holdem.core.errors import BetBelowMinimumError
from holdem.core.limits import AdjustedBets, TableLimits, auto_adjust
from holdem.core.rules import STANDARD
from holdem.wallet.ledger import Ledger
from holdem.wallet.rounds import ROUND_HANDLERS
from holdem.wallet.state import CLOCK_AHEAD, State

CALL_MULTIPLE = STANDARD.call_multiple  # the call is 2 × ante: held back at bet time
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
    """The events the wallet publishes in answer to one command or round event (others: [])."""
    command_handler = _COMMAND_HANDLERS.get(type(message))
    if command_handler is not None:
        return command_handler(state, message, ctx, table)
    round_handler = ROUND_HANDLERS.get(type(message))
    return round_handler(state, message, ctx) if round_handler is not None else []


def bind(table: Table) -> Callable[[State, Message, Context], list[Message]]:
    """``decide`` for one table, in the shape the runtime calls."""

    def decide_for_table(state: State, message: Message, ctx: Context) -> list[Message]:
        return decide(state, message, ctx, table=table)

    return decide_for_table


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


def _check_duplicate(state: State, command: Command, ctx: Context) -> bool:
    """True if this exact command was already decided; raise if its id was used for another,
    or if it is too old for the wallet to know whether it was (ADR 010)."""
    seen = _seen(state, command)
    if seen is None:
        _check_window(state, command, ctx)
        return False
    if seen != fingerprint(command):
        raise Refusal(
            Reason.DUPLICATE, f"command_id {command.command_id} was used for another body"
        )
    return True


def _check_window(state: State, command: Command, ctx: Context) -> None:
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


def _place_bet(state: State, command: PlaceBet, ctx: Context, table: Table) -> list[Message]:
    try:
        if _check_duplicate(state, command, ctx):
            return []
        bets = _admit(state, command, table)
    except Refusal as refusal:
        return bet_refused(command, ctx, refusal)
    return _take_stakes(state, command, ctx, bets)


def bet_refused(command: PlaceBet, ctx: Context, refusal: Refusal) -> list[Message]:
    """The answer to a bet the wallet turns down: to the player, and for its own memory."""
    rejected = BetRejected(
        **ctx.envelope(command.player_id, command.round_id),
        command_id=command.command_id,
        reason=refusal.reason,
        detail=refusal.detail,
    )
    # The wallet folds only its own topic: WalletRejected is how it remembers the answer.
    return [rejected, _wallet_rejected(command, ctx, refusal)]


def _admit(state: State, command: PlaceBet, table: Table, *, funds: bool = True) -> AdjustedBets:
    """The bets as the table accepts them, or the Refusal that says why not; ``funds=False``
    leaves the balance to the operator's wallet (seamless mode, ADR 015)."""
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
    if funds and available < needed:
        raise Refusal(Reason.INSUFFICIENT_FUNDS, f"needs {needed}, available {available}")
    return bets


def _take_stakes(
    state: State,
    command: PlaceBet,
    ctx: Context,
    bets: AdjustedBets,
    ledger: Ledger | None = None,
    digest: str | None = None,
) -> list[Message]:
    """BetPlaced, StakeTaken and CallHeld; ``ledger``: balances already moved in this decision,
    ``digest``: the command's fingerprint if recorded before (seamless mode, ADR 015)."""
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
    ledger = ledger or Ledger(state, (command.player_id, command.currency, command.mode), ctx)
    stake = ledger.move(
        StakeTaken,
        f"stake:{round_id}",
        bets.ante + bets.aa_bonus,
        round_id,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        command_id=command.command_id,
        fingerprint=digest or fingerprint(command),
    )
    return [placed, stake, ledger.move(CallHeld, f"hold:{round_id}", call_hold, round_id)]


def _deposit(state: State, command: Deposit, ctx: Context, table: Table) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if _check_duplicate(state, command, ctx):
            return []
        if state.account(key).available + command.amount > MAX_BALANCE:
            raise Refusal(Reason.INVALID, f"the balance would exceed {MAX_BALANCE}")
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsDeposited, "deposit", command)]


def _withdraw(state: State, command: Withdraw, ctx: Context, table: Table) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if _check_duplicate(state, command, ctx):
            return []
        available = state.account(key).available
        if available < command.amount:
            raise Refusal(Reason.INSUFFICIENT_FUNDS, f"available {available}")
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsWithdrawn, "withdraw", command)]


def _command_move(
    ledger: Ledger, model: type[WalletEvent], prefix: str, command: Deposit | Withdraw
) -> WalletEvent:
    return ledger.move(
        model,
        f"{prefix}:{command.command_id}",
        command.amount,
        None,
        command_id=command.command_id,
        fingerprint=fingerprint(command),
    )


_Handler: TypeAlias = Callable[[State, Any, Context, Table], list[Message]]
_COMMAND_HANDLERS: dict[type[Message], _Handler] = {
    PlaceBet: _place_bet,
    Deposit: _deposit,
    Withdraw: _withdraw,
}
