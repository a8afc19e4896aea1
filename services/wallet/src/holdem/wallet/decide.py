"""The wallet's pure decisions: bets, deposits, withdrawals, and the money side of each round."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from holdem.core.contracts import (
    BetPlaced,
    BetRejected,
    CallHeld,
    Command,
    Deposit,
    Envelope,
    FundsDeposited,
    FundsWithdrawn,
    GrantFun,
    Message,
    Mode,
    OperatorRefusal,
    PlaceBet,
    Reason,
    Rebet,
    ResetFun,
    StakeTaken,
    TableCommand,
    WalletRejected,
    Withdraw,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.decider import Context
from holdem.core.errors import BetBelowMinimumError, NotChipsError
from holdem.core.limits import AdjustedBets, TableLimits, auto_adjust
from holdem.core.rules import STANDARD
from holdem.core.table_book import Table as BookTable
from holdem.core.table_book import TableBook
from holdem.wallet.ledger import Ledger
from holdem.wallet.rounds import ROUND_HANDLERS
from holdem.wallet.state import CLOCK_AHEAD, State
from holdem.wallet.tables import decide_table

CALL_MULTIPLE = STANDARD.call_multiple  # the call is 2 × ante: held back at bet time
MAX_BALANCE = 10**15  # the contracts' Balance bound: a deposit beyond it could not be reported
_ENVELOPE = {"event_id", "occurred_at", "causation_id", "correlation_id", "command_id"}


@dataclass(frozen=True, slots=True)
class Table:
    """The deployment's default table, for a v1 PlaceBet (no table_id): its currency and limits
    (minor units), from the HOLDEM_TABLE_* settings. Its rounds' other terms (decision time,
    policy) are the dealer's settings, as before tables were data (ADR 018)."""

    currency: str
    limits: TableLimits


@dataclass(frozen=True, slots=True)
class Tables:
    """Where the wallet finds a bet's table: the default one (v1) and the book (v2, Rebet)."""

    default: Table
    book: TableBook


class Refusal(Exception):
    """A command the wallet turns down; carried up to the handler that writes the rejection.
    ``bet_reason``: the bet's BetRejected reason when it is one ``wallet.rejected`` v2 cannot
    carry (the operator's wallet's refusals, seamless mode); ``reason`` is then its fold."""

    def __init__(
        self, reason: Reason, detail: str, bet_reason: Reason | OperatorRefusal | None = None
    ) -> None:
        super().__init__(f"{(bet_reason or reason).value}: {detail}")
        self.reason = reason
        self.detail = detail
        self.bet_reason = reason if bet_reason is None else bet_reason


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


def decide(state: State, message: Envelope, ctx: Context, *, tables: Tables) -> list[Envelope]:
    """The events the wallet publishes in answer to one command or round event (others: [])."""
    if isinstance(message, TableCommand):
        return decide_table(tables.book, message, ctx)
    if not isinstance(message, Message):
        return []
    command_handler = _COMMAND_HANDLERS.get(type(message))
    if command_handler is not None:
        return list(command_handler(state, message, ctx, tables))
    round_handler = ROUND_HANDLERS.get(type(message))
    return list(round_handler(state, message, ctx)) if round_handler is not None else []


def bind(
    table: Table, book: TableBook | None = None
) -> Callable[[State, Envelope, Context], list[Envelope]]:
    """``decide`` for a default table and a table book, in the shape the runtime calls."""
    tables = Tables(table, TableBook() if book is None else book)

    def decide_for_tables(state: State, message: Envelope, ctx: Context) -> list[Envelope]:
        return decide(state, message, ctx, tables=tables)

    return decide_for_tables


# --- commands -------------------------------------------------------------------------------


def _seen(state: State, command: Command) -> str | None:
    """The fingerprint recorded for this command_id, or None for a new command."""
    return state.commands.get((command.player_id, command.command_id))


def _wallet_rejected(
    command: Command, ctx: Context, refusal: Refusal, digest: str | None = None
) -> WalletRejected:
    return WalletRejected(
        **ctx.envelope(command.player_id, command.round_id),
        command_id=command.command_id,
        command_type=str(getattr(command, "type", "")),
        reason=refusal.reason,
        detail=refusal.detail,
        fingerprint=digest or fingerprint(command),
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


@dataclass(frozen=True, slots=True)
class Terms:
    """What one bet is played under: its currency, mode and limits, and the table version."""

    currency: str
    mode: Mode
    limits: TableLimits | None  # None: a bet admitted before (seamless mode, once debited)
    # The BetPlaced fields that pin the round to its table's version (none: the default table)
    pinned: Mapping[str, Any] = field(default_factory=dict)


def _terms(command: PlaceBet | Rebet, tables: Tables) -> Terms:
    """The table a bet names, as it is now; or the Refusal saying why it cannot be played."""
    if command.table_id is None:  # a v1 PlaceBet: the default table, the command's mode
        assert isinstance(command, PlaceBet)
        return Terms(tables.default.currency, command.mode, tables.default.limits)
    table = tables.book.get(command.table_id)
    if table is None:
        raise Refusal(Reason.UNKNOWN_TABLE, f"no table {command.table_id}")
    if not table.open:
        raise Refusal(Reason.TABLE_CLOSED, f"table {command.table_id} is closed")
    terms = table.terms
    if isinstance(command, PlaceBet) and command.mode is not terms.mode:
        raise Refusal(Reason.WRONG_MODE, f"table {command.table_id} plays {terms.mode.value}")
    return Terms(terms.currency, terms.mode, table.limits, table_terms(table))


def _requested(state: State, command: PlaceBet | Rebet) -> tuple[str, int, int]:
    """(currency, ante, aa_bonus) the command asks for; a Rebet's from the player's last bet."""
    if isinstance(command, PlaceBet):
        return command.currency, command.ante, command.aa_bonus
    last = state.rebets.get(command.player_id, {}).get(command.table_id)
    if last is None:
        raise Refusal(Reason.NOTHING_TO_REBET, f"no earlier bet at table {command.table_id}")
    return "", *last


def _place_bet(
    state: State, command: PlaceBet | Rebet, ctx: Context, tables: Tables
) -> list[Message]:
    try:
        if _check_duplicate(state, command, ctx):
            return []
        terms = _terms(command, tables)
        asked = _requested(state, command)
        bets = _admit(state, command, terms, asked)
    except Refusal as refusal:
        return bet_refused(command, ctx, refusal)
    return _take_stakes(state, command, ctx, bets, terms, asked[1:])


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
    )
    # The wallet folds only its own topic: WalletRejected is how it remembers the answer.
    return [rejected, _wallet_rejected(command, ctx, refusal, digest)]


def _admit(
    state: State,
    command: PlaceBet | Rebet,
    terms: Terms,
    asked: tuple[str, int, int],
    *,
    funds: bool = True,
) -> AdjustedBets:
    """The bets as the table accepts them, or the Refusal that says why not; ``funds=False``
    leaves the balance to the operator's wallet (seamless mode, ADR 015)."""
    currency, ante, aa_bonus = asked
    if command.round_id in state.rounds:
        raise Refusal(Reason.ROUND_EXISTS, f"round {command.round_id} already has a bet")
    if currency and currency != terms.currency:
        raise Refusal(Reason.UNSUPPORTED_CURRENCY, f"this table plays in {terms.currency}")
    if terms.limits is None:
        raise Refusal(Reason.INVALID, "no limits to admit the bet under")
    try:
        bets = auto_adjust(ante, aa_bonus, terms.limits)
    except BetBelowMinimumError as error:
        raise Refusal(Reason.BELOW_MINIMUM, str(error)) from None
    except NotChipsError as error:
        raise Refusal(Reason.NOT_CHIPS, str(error)) from None
    open_round = state.open_rounds.get(command.player_id)
    if open_round is not None:
        raise Refusal(Reason.ROUND_IN_PROGRESS, f"round {open_round} awaits its decision")
    needed = bets.ante + bets.aa_bonus + CALL_MULTIPLE * bets.ante
    available = state.account((command.player_id, terms.currency, terms.mode)).available
    if funds and available < needed:
        raise Refusal(Reason.INSUFFICIENT_FUNDS, f"needs {needed}, available {available}")
    return bets


def _take_stakes(
    state: State,
    command: PlaceBet | Rebet,
    ctx: Context,
    bets: AdjustedBets,
    terms: Terms,
    requested: tuple[int, int],
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
        currency=terms.currency,
        mode=terms.mode,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        call_hold=call_hold,
        requested_ante=requested[0],
        requested_aa_bonus=requested[1],
        adjusted=bets.adjusted,
        **terms.pinned,
    )
    ledger = ledger or Ledger(state, (command.player_id, terms.currency, terms.mode), ctx)
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


PINNED = (
    "table_id",
    "table_version",
    "decision_timeout_s",
    "timeout_policy",
    "pay_table",
    "idle_timeout_s",  # BetPlaced v3: the session's idle timeout (ADR 020)
)


def table_terms(table: BookTable) -> dict[str, Any]:
    """The BetPlaced fields that pin a round to its table's version."""
    terms = table.terms
    return {
        "table_id": table.table_id,
        "table_version": table.version,
        "decision_timeout_s": terms.decision_timeout_s,
        "timeout_policy": terms.timeout_policy,
        "pay_table": terms.pay_table,
        "idle_timeout_s": terms.idle_timeout_s,
    }


def _real_money_only(command: Deposit | Withdraw) -> None:
    if command.mode is not Mode.REAL:
        raise Refusal(Reason.WRONG_MODE, "fun balances are granted and reset (GrantFun, ResetFun)")


def _deposit(state: State, command: Deposit, ctx: Context, tables: Tables) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if _check_duplicate(state, command, ctx):
            return []
        _real_money_only(command)
        if state.account(key).available + command.amount > MAX_BALANCE:
            raise Refusal(Reason.INVALID, f"the balance would exceed {MAX_BALANCE}")
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsDeposited, "deposit", command)]


def _withdraw(state: State, command: Withdraw, ctx: Context, tables: Tables) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if _check_duplicate(state, command, ctx):
            return []
        _real_money_only(command)
        available = state.account(key).available
        if available < command.amount:
            raise Refusal(Reason.INSUFFICIENT_FUNDS, f"available {available}")
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsWithdrawn, "withdraw", command)]


def _fun_grant(state: State, command: GrantFun, ctx: Context, tables: Tables) -> list[Message]:
    """Play money in: a deposit to the player's fun account, which no real account ever sees."""
    key = (command.player_id, command.currency, Mode.FUN)
    try:
        if _check_duplicate(state, command, ctx):
            return []
        if state.account(key).available + command.amount > MAX_BALANCE:
            raise Refusal(Reason.INVALID, f"the balance would exceed {MAX_BALANCE}")
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsDeposited, "grant", command, command.amount)]


def _fun_reset(state: State, command: ResetFun, ctx: Context, tables: Tables) -> list[Message]:
    """The fun account's available balance set to ``amount``: what it had goes out (a
    withdrawal, possibly of 0, which records the answer), then ``amount`` comes in. Play money
    held for an open fun round stays held and is settled as usual."""
    key = (command.player_id, command.currency, Mode.FUN)
    try:
        if _check_duplicate(state, command, ctx):
            return []
    except Refusal as refusal:
        return [_wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    events: list[Message] = [
        _command_move(ledger, FundsWithdrawn, "reset", command, ledger.available)
    ]
    if command.amount:
        events.append(_command_move(ledger, FundsDeposited, "reset-grant", command, command.amount))
    return events


def _command_move(
    ledger: Ledger,
    model: type[WalletEvent],
    prefix: str,
    command: Deposit | Withdraw | GrantFun | ResetFun,
    amount: int | None = None,
) -> WalletEvent:
    return ledger.move(
        model,
        f"{prefix}:{command.command_id}",
        command.amount if amount is None else amount,
        None,
        command_id=command.command_id,
        fingerprint=fingerprint(command),
    )


_Handler: TypeAlias = Callable[[State, Any, Context, Tables], list[Message]]
_COMMAND_HANDLERS: dict[type[Message], _Handler] = {
    PlaceBet: _place_bet,
    Rebet: _place_bet,
    Deposit: _deposit,
    Withdraw: _withdraw,
    GrantFun: _fun_grant,
    ResetFun: _fun_reset,
}
