"""Commands an operator sends on ``holdem.commands``, keyed by ``player_id``."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from holdem.core.contracts.base import Amount, Command, Currency, Id, Mode, PositiveAmount


class PlaceBet(Command):
    """Start round ``round_id`` (client-chosen) with an ante and an optional AA Bonus.

    v2 names its table (``table_id``, required). A v1 PlaceBet (no table) plays at the
    deployment's default table, whose terms come from the wallet's HOLDEM_TABLE_* settings
    (ADR 018); v1 stays accepted so current clients keep working."""

    OWNER: ClassVar[str] = "wallet"

    # (The docstring is the published schema's description, locked with v2.) What is read is
    # what the published schemas accept (issue 29): v2's makes ``table_id`` optional, v1's
    # allows one (unknown fields were allowed); so the table comes from the field, whatever
    # the version, and a PlaceBet without one plays at the default table.

    type: Literal["command.place_bet"] = "command.place_bet"
    version: Literal[1, 2] = 2
    round_id: Id
    currency: Currency
    ante: PositiveAmount
    aa_bonus: Amount = 0
    mode: Mode = Mode.REAL
    table_id: Id | None = None

    @model_validator(mode="after")
    def _version_of_a_body_without_one(self) -> PlaceBet:
        if "version" not in self.model_fields_set and self.table_id is None:
            # A v1 client that leaves out the version (its default was 1) still means v1.
            object.__setattr__(self, "version", 1)
        return self


class Rebet(Command):
    """Start round ``round_id`` with the bets the player last asked for at ``table_id``, through
    the same limits, chips and auto-adjust as a PlaceBet (nothing_to_rebet if there are none)."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.rebet"] = "command.rebet"
    version: Literal[1] = 1
    round_id: Id
    table_id: Id


class GrantFun(Command):
    """The operator adds play money to the player's fun balance (mode fun only, ever)."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.grant_fun"] = "command.grant_fun"
    version: Literal[1] = 1
    currency: Currency
    amount: PositiveAmount


class ResetFun(Command):
    """The operator sets the player's available fun balance to ``amount`` (0 clears it)."""

    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.reset_fun"] = "command.reset_fun"
    version: Literal[1] = 1
    currency: Currency
    amount: Amount = 0


class Call(Command):
    OWNER: ClassVar[str] = "dealer"
    type: Literal["command.call"] = "command.call"
    version: Literal[1] = 1
    round_id: Id


class Fold(Command):
    OWNER: ClassVar[str] = "dealer"
    type: Literal["command.fold"] = "command.fold"
    version: Literal[1] = 1
    round_id: Id


class VoidRound(Command):
    """The operator declares a malfunction for a round: it is voided and every stake refunded."""

    OWNER: ClassVar[str] = "dealer"
    type: Literal["command.void_round"] = "command.void_round"
    version: Literal[1] = 1
    round_id: Id
    reason: str = Field(default="operator", max_length=200)


class Deposit(Command):
    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.deposit"] = "command.deposit"
    version: Literal[1] = 1
    currency: Currency
    amount: PositiveAmount
    mode: Mode = Mode.REAL


class Withdraw(Command):
    OWNER: ClassVar[str] = "wallet"
    type: Literal["command.withdraw"] = "command.withdraw"
    version: Literal[1] = 1
    currency: Currency
    amount: PositiveAmount
    mode: Mode = Mode.REAL
