"""The wallet's settings: the shared runtime's, plus the table it takes bets for (HOLDEM_*)."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, model_validator

from holdem.core.currencies import Currencies
from holdem.core.limits import TableLimits
from holdem.runtime.settings import RuntimeSettings
from holdem.wallet.admission import DefaultTable
from holdem.wallet.seamless import Timing


class WalletSettings(RuntimeSettings):
    """Read from the environment when instantiated, e.g. ``HOLDEM_TABLE_ANTE_MAX=50000``."""

    metrics_port: int = Field(
        default=9102, ge=0, le=65535, description="Port of the /metrics endpoint; 0 = off"
    )
    table_currency: str = Field(
        default="EUR",
        pattern=r"^[A-Z]{3}$",
        description="Currency the default table plays in: ISO 4217 or one of HOLDEM_CURRENCIES",
    )
    currencies: str = Field(
        default="",
        description="Currencies ISO 4217 lacks (crypto) and their decimals, up to 8, e.g. "
        "'BTC=8,ETH=6' (BTC, ETH and LTC have 8 unless set): what tables may play in (ADR 029)",
    )
    table_ante_min: int = Field(
        default=100, ge=1, description="Smallest ante accepted, minor units; below it is rejected"
    )
    table_ante_max: int = Field(
        default=100_000, ge=1, description="Largest ante, minor units; above it is auto-adjusted"
    )
    table_bonus_max: int = Field(
        default=50_000, ge=0, description="Largest AA Bonus, minor units; above it is auto-adjusted"
    )

    wallet_mode: Literal["transfer", "seamless"] = Field(
        default="transfer",
        description="transfer: the wallet keeps the players' money; seamless: the operator's "
        "wallet does, asked on holdem.wallet, answering on holdem.seamless.replies (ADR 015)",
    )
    seamless_debit_timeout_s: float = Field(
        default=10.0, gt=0, description="Seamless: a debit unanswered this long is rolled back"
    )
    seamless_retry_s: float = Field(
        default=5.0, gt=0, description="Seamless: an unacknowledged credit or rollback is re-sent"
    )

    @model_validator(mode="after")
    def _limits_are_consistent(self) -> WalletSettings:
        _ = self.table  # TableLimits refuses min > max: fail at start-up, not at the first bet
        self.currency_table.exponent(self.table_currency)  # an unknown default currency too
        return self

    @property
    def currency_table(self) -> Currencies:
        """ISO 4217 and the configured codes (``HOLDEM_CURRENCIES``)."""
        return Currencies.from_text(self.currencies)

    @property
    def table(self) -> DefaultTable:
        """The table as the decider sees it."""
        limits = TableLimits(self.table_ante_min, self.table_ante_max, self.table_bonus_max)
        return DefaultTable(self.table_currency, limits)

    @property
    def timing(self) -> Timing:
        """The seamless bridge's deadlines."""
        return Timing(
            timedelta(seconds=self.seamless_debit_timeout_s),
            timedelta(seconds=self.seamless_retry_s),
        )
