"""The auditor's view of a run: a thin re-export of holdem.harness.audit, the one implementation
that `make run`'s demo and the tests share (the logic moved there from here)."""

from __future__ import annotations

from holdem.harness.audit import (
    CARD,
    OPERATOR_VISIBLE,
    ROLES,
    AuditReport,
    Record,
    RoundKey,
    RoundLog,
    assert_invariants,
    audit_run,
    check,
    read_run,
    rounds_of,
    violations,
)

__all__ = [
    "CARD",
    "OPERATOR_VISIBLE",
    "ROLES",
    "AuditReport",
    "Record",
    "RoundKey",
    "RoundLog",
    "assert_invariants",
    "audit_run",
    "check",
    "read_run",
    "rounds_of",
    "violations",
]
