"""Unit tests' fixtures: the streaming audit folds every record list the whole audit's tests
check, and must agree with it (tests/support/audit_oracle.py, ADR 040)."""

from __future__ import annotations

import pytest
from support import audit_oracle

from holdem.harness import audit


@pytest.fixture(autouse=True)
def _streaming_audit_agrees(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = request.module
    if getattr(module, "violations", None) is audit.violations:
        monkeypatch.setattr(
            module, "violations", audit_oracle.violations_folded_too(audit.violations)
        )
    if getattr(module, "check", None) is audit.check:
        monkeypatch.setattr(module, "check", audit_oracle.check_folded_too(audit.check))
