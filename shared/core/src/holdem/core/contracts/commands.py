"""Commands an operator sends on ``holdem.commands``, keyed by ``player_id``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from holdem.core.contracts.base import Amount, Command, Currency, Id, Mode, PositiveAmount


class PlaceBet(Command):
    """Start round ``round_id`` (client-chosen) with an ante and an optional AA Bonus."""

    type: Literal["command.place_bet"] = "command.place_bet"
    version: Literal[1] = 1
    round_id: Id
    currency: Currency
    ante: PositiveAmount
    aa_bonus: Amount = 0
    mode: Mode = Mode.REAL


class Call(Command):
    type: Literal["command.call"] = "command.call"
    version: Literal[1] = 1
    round_id: Id


class Fold(Command):
    type: Literal["command.fold"] = "command.fold"
    version: Literal[1] = 1
    round_id: Id


class VoidRound(Command):
    """The operator declares a malfunction for a round: it is voided and every stake refunded."""

    type: Literal["command.void_round"] = "command.void_round"
    version: Literal[1] = 1
    round_id: Id
    reason: str = Field(default="operator", max_length=200)


class Deposit(Command):
    type: Literal["command.deposit"] = "command.deposit"
    version: Literal[1] = 1
    currency: Currency
    amount: PositiveAmount
    mode: Mode = Mode.REAL


class Withdraw(Command):
    type: Literal["command.withdraw"] = "command.withdraw"
    version: Literal[1] = 1
    currency: Currency
    amount: PositiveAmount
    mode: Mode = Mode.REAL
