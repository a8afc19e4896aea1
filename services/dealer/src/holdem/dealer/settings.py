"""The dealer's settings: the shared runtime's plus the table's timing rules (HOLDEM_* env vars)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pydantic import Field, SecretStr, field_validator

from holdem.dealer.context import TimeoutPolicy, TimingRules
from holdem.dealer.timers import AVAILABLE_POLICIES
from holdem.dealer.vault import Vault, VaultKeyError, parse_keys
from holdem.runtime.settings import RuntimeSettings


class DealerSettings(RuntimeSettings):
    """Read from the environment when instantiated, e.g. ``HOLDEM_TIMEOUT_POLICY=call``."""

    metrics_port: int = Field(
        default=9101, ge=0, le=65535, description="Port of the /metrics endpoint; 0 = off"
    )
    decision_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="Seconds a player has to Call or Fold after the deal before the table's "
        "timeout policy decides for them",
    )
    timeout_policy: TimeoutPolicy = Field(
        default=TimeoutPolicy.FOLD,
        description="How a timed-out round is completed: fold, call, or optimal (higher EV)",
    )
    stuck_after_s: float = Field(
        default=10.0,
        gt=0,
        description="Seconds after which the watchdog reports a round still waiting for its deal "
        "(bet placed, not dealt) or its settlement (decided, not settled) as a Malfunction",
    )
    idle_timeout_s: int = Field(
        default=900,
        ge=1,
        description="Seconds without a command from a player at a table after which his session "
        "there ends, for bets that do not carry their table's idle timeout (ADR 020)",
    )
    watchdog_interval_s: float = Field(
        default=1.0, gt=0, description="Seconds between ticks that check timeouts and the watchdog"
    )

    dealer_test_mode: bool = Field(
        default=False,
        description="Test mode (ADR 030): the dealer accepts ForceNextDeck and deals a player's "
        "next play-money round from the deck it sets; it refuses to run while the table book "
        "holds a real-money table. Never on a deployment that takes real money",
    )

    dealer_vault_keys: SecretStr | None = Field(
        default=None,
        description="The vault key ring: 'id:<base64 of 32 random bytes>' entries, comma "
        "separated; old ids stay to open old records after a rotation",
    )
    dealer_vault_key_file: Path | None = Field(
        default=None,
        description="A file holding the key ring (same format, one entry a line); "
        "read in addition to HOLDEM_DEALER_VAULT_KEYS",
    )
    dealer_vault_key_id: str | None = Field(
        default=None,
        description="Id of the key that seals new decks; may be omitted when the ring has one",
    )

    @field_validator("timeout_policy")
    @classmethod
    def _policy_is_available(cls, policy: TimeoutPolicy) -> TimeoutPolicy:
        # Refused at start-up: a policy that cannot decide would fail every tick, watchdog too.
        if policy not in AVAILABLE_POLICIES:
            raise ValueError(f"timeout policy {policy.value!r} is not available")
        return policy

    @property
    def table(self) -> TimingRules:
        """The table's timing rules as the decider sees them."""
        return TimingRules(
            decision_timeout=timedelta(seconds=self.decision_timeout_s),
            timeout_policy=self.timeout_policy,
            stuck_after=timedelta(seconds=self.stuck_after_s),
            idle_timeout=timedelta(seconds=self.idle_timeout_s),
        )

    def vault(self) -> Vault:
        """The key ring; ``VaultKeyError`` (the dealer does not start) when none is configured."""
        text = self.dealer_vault_keys.get_secret_value() if self.dealer_vault_keys else ""
        if self.dealer_vault_key_file is not None:
            try:
                text += "," + self.dealer_vault_key_file.read_text()
            except OSError as error:
                raise VaultKeyError(f"cannot read the vault key file: {error}") from None
        keys = parse_keys(text)
        if not keys:
            raise VaultKeyError(
                "no vault key: set HOLDEM_DEALER_VAULT_KEYS=id:<base64 of 32 bytes> or "
                "HOLDEM_DEALER_VAULT_KEY_FILE (see docs/dealer.md)"
            )
        active = self.dealer_vault_key_id
        if active is None and len(keys) > 1:
            raise VaultKeyError("several vault keys: HOLDEM_DEALER_VAULT_KEY_ID must name one")
        return Vault(keys, active or next(iter(keys)))
