"""Admitting a bet, the rules both wallet modes share: which table it is played at, its limits
and auto-adjust, the round and seat it may take, the funds it needs (transfer mode only), and
the events that start a round once it is admitted (BetPlaced, StakeTaken, CallHeld).

Transfer mode (``decide``) admits and takes the stakes in one decision; seamless mode
(``seamless``, ADR 015) admits, asks the operator's wallet for the money, and takes the stakes
once the operator's debit is checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    CallHeld,
    LimitKind,
    Message,
    Mode,
    OperatorRefusal,
    PlaceBet,
    ProtectionRefusal,
    RealityCheck,
    Reason,
    Rebet,
    StakeTaken,
)
from holdem.core.currencies import CURRENCIES, Currencies
from holdem.core.decider import Context
from holdem.core.errors import BetBelowMinimumError, NotChipsError
from holdem.core.limits import AdjustedBets, TableLimits, auto_adjust
from holdem.core.rules import STANDARD
from holdem.core.table_book import Table, TableBook
from holdem.wallet.ledger import Ledger
from holdem.wallet.state import State

CALL_MULTIPLE = STANDARD.call_multiple  # the call is 2 × ante: held back at bet time


@dataclass(frozen=True, slots=True)
class DefaultTable:
    """The deployment's default table, for a v1 PlaceBet (no table_id): its currency and limits
    (minor units), from the HOLDEM_TABLE_* settings. Its rounds' other terms (decision time,
    policy) are the dealer's settings, as before tables were data (ADR 018)."""

    currency: str
    limits: TableLimits


@dataclass(frozen=True, slots=True)
class Tables:
    """Where the wallet finds a bet's table: the default one (v1) and the book (v2, Rebet);
    and the currencies a table may play in (ISO 4217 and the configured ones, ADR 029)."""

    default: DefaultTable
    book: TableBook
    currencies: Currencies = CURRENCIES


class Refusal(Exception):
    """A command the wallet turns down; carried up to the handler that writes the rejection.
    ``bet_reason``: the bet's BetRejected reason when it is one ``wallet.rejected`` v2 cannot
    carry (the operator's wallet's refusals, seamless mode; player protection, ADR 028, with
    the ``limit`` or ``reality_check`` its BetRejected carries); ``reason`` is then its fold."""

    def __init__(
        self,
        reason: Reason,
        detail: str,
        bet_reason: Reason | OperatorRefusal | ProtectionRefusal | None = None,
    ) -> None:
        super().__init__(f"{(bet_reason or reason).value}: {detail}")
        self.reason = reason
        self.detail = detail
        self.bet_reason = reason if bet_reason is None else bet_reason
        self.limit: LimitKind | None = None
        self.reality_check: RealityCheck | None = None


@dataclass(frozen=True, slots=True)
class Terms:
    """What one bet is played under: its currency, mode and limits, and the table version."""

    currency: str
    mode: Mode
    limits: TableLimits | None  # None: a bet admitted before (seamless mode, once debited)
    # The BetPlaced fields that pin the round to its table's version (none: the default table)
    pinned: Mapping[str, Any] = field(default_factory=dict)


PINNED = (
    "table_id",
    "table_version",
    "decision_timeout_s",
    "timeout_policy",
    "pay_table",
    "idle_timeout_s",  # BetPlaced v3: the session's idle timeout (ADR 020)
)


def table_terms(table: Table) -> dict[str, Any]:
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


def terms_of(command: PlaceBet | Rebet, tables: Tables) -> Terms:
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


def requested(state: State, command: PlaceBet | Rebet) -> tuple[str, int, int]:
    """(currency, ante, aa_bonus) the command asks for; a Rebet's from the player's last bet."""
    if isinstance(command, PlaceBet):
        return command.currency, command.ante, command.aa_bonus
    last = state.rebets.get(command.player_id, {}).get(command.table_id)
    if last is None:
        raise Refusal(Reason.NOTHING_TO_REBET, f"no earlier bet at table {command.table_id}")
    return "", *last


def admit(
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


def bet_placed(
    command: Any, ctx: Context, bets: AdjustedBets, terms: Terms, requested: tuple[int, int]
) -> BetPlaced:
    """The round's BetPlaced for admitted ``bets`` of a command with a ``round_id``: what the
    dealer and settlement play it by (a PlaceBet, a Rebet, a free hand)."""
    return BetPlaced(
        **ctx.envelope(command.player_id, command.round_id),
        command_id=command.command_id,
        currency=terms.currency,
        mode=terms.mode,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        call_hold=CALL_MULTIPLE * bets.ante,
        requested_ante=requested[0],
        requested_aa_bonus=requested[1],
        adjusted=bets.adjusted,
        **terms.pinned,
    )


def take_stakes(
    state: State,
    command: PlaceBet | Rebet,
    ctx: Context,
    bets: AdjustedBets,
    terms: Terms,
    requested: tuple[int, int],
    fingerprint: str,
    ledger: Ledger | None = None,
) -> list[Message]:
    """BetPlaced, StakeTaken and CallHeld for an admitted bet; ``fingerprint``: the command's
    (idempotency.fingerprint, or the one recorded with its debit in seamless mode), ``ledger``:
    balances already moved in this decision (seamless mode, ADR 015)."""
    round_id, call_hold = command.round_id, CALL_MULTIPLE * bets.ante
    # BetPlaced goes first: should the events ever not be one transaction, a crash after it is
    # redelivered and decided again, while a crash after StakeTaken would leave no round.
    placed = bet_placed(command, ctx, bets, terms, requested)
    ledger = ledger or Ledger(state, (command.player_id, terms.currency, terms.mode), ctx)
    stake = ledger.move(
        StakeTaken,
        f"stake:{round_id}",
        bets.ante + bets.aa_bonus,
        round_id,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        command_id=command.command_id,
        fingerprint=fingerprint,
    )
    return [placed, stake, ledger.move(CallHeld, f"hold:{round_id}", call_hold, round_id)]
