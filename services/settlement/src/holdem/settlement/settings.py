"""The settlement service's settings: the shared runtime's plus its own (HOLDEM_* env vars)."""

from __future__ import annotations

from pydantic import Field

from holdem.runtime.settings import RuntimeSettings
from holdem.settlement.state import HISTORY_LIMIT


class SettlementSettings(RuntimeSettings):
    """Read from the environment when instantiated, e.g. ``HOLDEM_HISTORY_LIMIT=20``."""

    metrics_port: int = Field(
        default=9103, ge=0, le=65535, description="Port of the /metrics endpoint; 0 = off"
    )
    history_limit: int = Field(
        default=HISTORY_LIMIT,
        ge=0,
        le=10_000,
        description="Finished real-money rounds kept per player for the game history; 0 = none",
    )
