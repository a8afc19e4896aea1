"""What the dealer's decider is handed from outside: the table's timing rules, a deck, a tick."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from holdem.core.contracts import TimeoutPolicy
from holdem.core.decider import Context
from holdem.dealer.vault import Vault

# A fresh shuffled deck (52 card codes in deal order) and the salt of its commitment.
DeckSource = Callable[[], tuple[Sequence[int], bytes]]

_DERIVED = uuid.UUID("0b9d7a52-2f0e-4b8e-9d67-6a3f1c2e8d41")


__all__ = ["DealerContext", "DeckSource", "Tick", "TimeoutPolicy", "TimingRules"]


@dataclass(frozen=True)
class TimingRules:
    """The dealer's default timing rules, from its settings: the decision timeout and its
    policy, the watchdog's bound and the session idle timeout, for rounds whose BetPlaced names
    no table terms; a round bet at a table of the book carries its own (ADR 018)."""

    decision_timeout: timedelta = timedelta(seconds=30)
    timeout_policy: TimeoutPolicy = TimeoutPolicy.FOLD
    stuck_after: timedelta = timedelta(seconds=10)
    # A session's idle timeout when its bet does not carry its table's (a BetPlaced v2, ADR 020).
    idle_timeout: timedelta = timedelta(seconds=900)


@dataclass(frozen=True)
class Tick:
    """Internal input, not a Kafka message: the runtime's periodic call, carrying the time and
    when the pipeline last resumed making progress (timers count from it at the earliest)."""

    now: datetime
    resumed_at: datetime | None = None


def no_deck_source() -> tuple[Sequence[int], bytes]:
    """The default: deciding to deal without a deck source is a wiring error, not a shuffle."""
    raise RuntimeError("DealerContext.new_deck is not set: the handler must supply the deck")


@dataclass
class DealerContext(Context):
    """The shared Context plus the table rules, the handler's deck source and the vault.

    ``new_deck`` is called only when a round is dealt, so the CSPRNG runs once per round; the
    decider stays pure because the randomness is the handler's, handed in like the clock. The
    vault (the dealer's key ring) seals a new deck and opens a sealed one at the reveal.
    """

    table: TimingRules = field(default_factory=TimingRules)
    new_deck: DeckSource = no_deck_source
    vault: Vault | None = None
    # An explicit test mode (HOLDEM_DEALER_TEST_MODE, ADR 030): only then is a deck forced.
    test_mode: bool = False

    def the_vault(self) -> Vault:
        if self.vault is None:
            raise RuntimeError("DealerContext.vault is not set: the handler must supply it")
        return self.vault

    def derived(self, cause: str, correlation_id: str | None) -> DealerContext:
        """A context whose event ids derive from ``cause`` (e.g. ``"timeout/r1"``), not from
        the tick that noticed it: the same decision on a later tick gets the same ids."""
        cause_id = str(uuid.uuid5(_DERIVED, cause))
        return replace(self, cause_id=cause_id, correlation_id=correlation_id, seed=None, _issued=0)
