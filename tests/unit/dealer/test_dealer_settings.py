"""The dealer's settings: HOLDEM_* environment variables become the table's timing rules."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from holdem.dealer.context import TimeoutPolicy
from holdem.dealer.settings import DealerSettings


def test_the_defaults_are_a_30s_decision_that_folds_and_a_10s_watchdog() -> None:
    settings = DealerSettings()

    assert settings.table.decision_timeout == timedelta(seconds=30)
    assert settings.table.timeout_policy is TimeoutPolicy.FOLD
    assert settings.table.stuck_after == timedelta(seconds=10)
    assert (settings.watchdog_interval_s, settings.metrics_port) == (1.0, 9101)


def test_the_table_is_read_from_holdem_environment_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOLDEM_DECISION_TIMEOUT_S", "12.5")
    monkeypatch.setenv("HOLDEM_TIMEOUT_POLICY", "call")
    monkeypatch.setenv("HOLDEM_STUCK_AFTER_S", "3")

    table = DealerSettings().table
    assert table.decision_timeout == timedelta(seconds=12.5)
    assert table.timeout_policy is TimeoutPolicy.CALL
    assert table.stuck_after == timedelta(seconds=3)


@pytest.mark.parametrize("env", [{"timeout_policy": "dance"}, {"decision_timeout_s": 0}])
def test_a_policy_the_dealer_cannot_apply_or_a_zero_timeout_fails_at_start_up(
    env: dict[str, object],
) -> None:
    with pytest.raises(ValidationError):
        DealerSettings(**env)  # type: ignore[arg-type]


def test_every_field_is_described() -> None:
    assert all(field.description for field in DealerSettings.model_fields.values())


def test_test_mode_is_off_unless_holdem_dealer_test_mode_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert DealerSettings().dealer_test_mode is False  # forced decks only where asked (ADR 030)
    monkeypatch.setenv("HOLDEM_DEALER_TEST_MODE", "true")
    assert DealerSettings().dealer_test_mode is True
