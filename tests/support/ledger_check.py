"""The money half of the audit: a thin re-export of holdem.harness.audit_money (moved there)."""

from __future__ import annotations

from holdem.harness.audit_money import MOVES, AccountKey, Balances, money_violations

__all__ = ["MOVES", "AccountKey", "Balances", "money_violations"]
