"""The wallet in transfer mode: the money is ours. Bets (admitted and staked at once),
deposits and withdrawals, fun-money grants and resets, and the money side of each round
(``rounds``); the admin's table commands (``tables``); promotions (``promotions``). What
seamless mode shares with it is in ``admission`` and ``idempotency``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from holdem.core.contracts import (
    Deposit,
    Envelope,
    FundsDeposited,
    FundsWithdrawn,
    GrantFun,
    Message,
    Mode,
    PlaceBet,
    PlayFreeHand,
    Reason,
    Rebet,
    ResetFun,
    TableCommand,
    Withdraw,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.currencies import CURRENCIES, Currencies
from holdem.core.decider import Context
from holdem.core.table_book import TableBook
from holdem.wallet.admission import (
    DefaultTable,
    Refusal,
    Tables,
)
from holdem.wallet.bets import TRANSFER, place_bet, play_free_hand
from holdem.wallet.idempotency import already_decided, fingerprint, wallet_rejected
from holdem.wallet.ledger import Ledger
from holdem.wallet.promotions import PROMO_HANDLERS
from holdem.wallet.protection import PROTECTION_HANDLERS
from holdem.wallet.rounds import ROUND_HANDLERS, round_closed
from holdem.wallet.state import State
from holdem.wallet.tables import decide_table

MAX_BALANCE = 10**15  # the contracts' Balance bound: a deposit beyond it could not be reported


def decide(
    state: State, message: Envelope, ctx: Context, *, tables: Tables, closes: bool = True
) -> list[Envelope]:
    """The events the wallet publishes in answer to one command or round event (others: []);
    ``closes``: a round's last movement is followed by its RoundClosed (seamless mode closes
    it once the operator acknowledged, ADR 028)."""
    if isinstance(message, TableCommand):
        return decide_table(tables.book, message, ctx, tables.currencies)
    if not isinstance(message, Message):
        return []
    command_handler = _COMMAND_HANDLERS.get(type(message))
    if command_handler is not None:
        return list(command_handler(state, message, ctx, tables))
    round_handler = ROUND_HANDLERS.get(type(message))
    if round_handler is None:
        return []
    events = round_handler(state, message, ctx)
    closed = round_closed(state, events, ctx) if closes else None
    return [*events, closed] if closed is not None else list(events)


def bind(
    table: DefaultTable, book: TableBook | None = None, currencies: Currencies = CURRENCIES
) -> Callable[[State, Envelope, Context], list[Envelope]]:
    """``decide`` for a default table, a table book and the currency table, in the shape the
    runtime calls."""
    tables = Tables(table, TableBook() if book is None else book, currencies)

    def decide_for_tables(state: State, message: Envelope, ctx: Context) -> list[Envelope]:
        return decide(state, message, ctx, tables=tables)

    return decide_for_tables


# --- commands -------------------------------------------------------------------------------


def _place_bet(
    state: State, command: PlaceBet | Rebet, ctx: Context, tables: Tables
) -> list[Message]:
    return place_bet(state, command, ctx, tables, TRANSFER)


def _play_free_hand(
    state: State, command: PlayFreeHand, ctx: Context, tables: Tables
) -> list[Message]:
    return play_free_hand(state, command, ctx, tables, TRANSFER)


def _real_money_only(command: Deposit | Withdraw) -> None:
    if command.mode is not Mode.REAL:
        raise Refusal(Reason.WRONG_MODE, "fun balances are granted and reset (GrantFun, ResetFun)")


def _known_currency(command: Deposit | GrantFun | ResetFun, tables: Tables) -> None:
    """One currency rule for money coming in (issue 29): ISO 4217 or a configured code, as for
    a promotional credit and a table. Money going out (Withdraw) is never refused for it."""
    if not tables.currencies.known(command.currency):
        raise Refusal(Reason.UNSUPPORTED_CURRENCY, f"no currency {command.currency}")


def _deposit(state: State, command: Deposit, ctx: Context, tables: Tables) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if already_decided(state, command, ctx):
            return []
        _real_money_only(command)
        _known_currency(command, tables)
        if state.account(key).available + command.amount > MAX_BALANCE:
            raise Refusal(Reason.INVALID, f"the balance would exceed {MAX_BALANCE}")
    except Refusal as refusal:
        return [wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsDeposited, "deposit", command)]


def _withdraw(state: State, command: Withdraw, ctx: Context, tables: Tables) -> list[Message]:
    key = (command.player_id, command.currency, command.mode)
    try:
        if already_decided(state, command, ctx):
            return []
        _real_money_only(command)
        available = state.account(key).available
        if available < command.amount:
            raise Refusal(Reason.INSUFFICIENT_FUNDS, f"available {available}")
    except Refusal as refusal:
        return [wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsWithdrawn, "withdraw", command)]


def _fun_grant(state: State, command: GrantFun, ctx: Context, tables: Tables) -> list[Message]:
    """Play money in: a deposit to the player's fun account, which no real account ever sees."""
    key = (command.player_id, command.currency, Mode.FUN)
    try:
        if already_decided(state, command, ctx):
            return []
        _known_currency(command, tables)
        if state.account(key).available + command.amount > MAX_BALANCE:
            raise Refusal(Reason.INVALID, f"the balance would exceed {MAX_BALANCE}")
    except Refusal as refusal:
        return [wallet_rejected(command, ctx, refusal)]
    ledger = Ledger(state, key, ctx)
    return [_command_move(ledger, FundsDeposited, "grant", command, command.amount)]


def _fun_reset(state: State, command: ResetFun, ctx: Context, tables: Tables) -> list[Message]:
    """The fun account's available balance set to ``amount``: what it had goes out (a
    withdrawal, possibly of 0, which records the answer), then ``amount`` comes in. Play money
    held for an open fun round stays held and is settled as usual."""
    key = (command.player_id, command.currency, Mode.FUN)
    try:
        if already_decided(state, command, ctx):
            return []
        _known_currency(command, tables)
    except Refusal as refusal:
        return [wallet_rejected(command, ctx, refusal)]
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
    PlayFreeHand: _play_free_hand,
    Deposit: _deposit,
    Withdraw: _withdraw,
    GrantFun: _fun_grant,
    ResetFun: _fun_reset,
    **PROTECTION_HANDLERS,
    **PROMO_HANDLERS,  # promotional credits and free-hand campaigns (ADR 029)
}
