"""The query service's settings: the shared runtime's plus its own (HOLDEM_* env vars)."""

from __future__ import annotations

from pydantic import Field

from holdem.core.contracts.queries import HISTORY_KEPT
from holdem.runtime.settings import RuntimeSettings


class QuerySettings(RuntimeSettings):
    """Read from the environment when instantiated, e.g. ``HOLDEM_HISTORY_KEPT=50``."""

    metrics_port: int = Field(
        default=9104, ge=0, le=65535, description="Port of the /metrics endpoint; 0 = off"
    )
    history_kept: int = Field(
        default=HISTORY_KEPT,
        ge=1,
        le=HISTORY_KEPT,
        description="Finished real-money rounds kept per player (the most a History query gets)",
    )
