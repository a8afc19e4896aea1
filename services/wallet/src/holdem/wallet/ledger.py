"""Running balances of one account within a decision, so each event states the balances after it."""

from __future__ import annotations

from typing import Any

from holdem.core.contracts.wallet import WalletEvent
from holdem.core.decider import Context
from holdem.wallet.state import DELTAS, AccountKey, State


class Ledger:
    """One account's running balances within a decision, so each event states the balances
    after its own movement (the same deltas ``evolve`` applies)."""

    def __init__(self, state: State, key: AccountKey, ctx: Context) -> None:
        self.player_id, self.currency, self.mode = key
        account = state.account(key)
        self.available, self.held = account.available, account.held
        self.ctx = ctx

    def move(
        self, model: type[WalletEvent], key: str, amount: int, round_id: str | None, **extra: Any
    ) -> WalletEvent:
        d_available, d_held, _ = DELTAS[model]
        self.available += d_available * amount
        self.held += d_held * amount
        return model(
            **self.ctx.envelope(self.player_id, round_id),
            idempotency_key=key,
            currency=self.currency,
            mode=self.mode,
            amount=amount,
            available=self.available,
            held=self.held,
            **extra,
        )
