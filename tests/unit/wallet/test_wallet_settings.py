"""The wallet's settings and its Spec: table limits from HOLDEM_* variables, topics it reads."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from holdem.wallet.app import wallet_spec
from holdem.wallet.settings import WalletSettings


def test_the_default_table_plays_euros_with_the_documented_limits() -> None:
    table = WalletSettings().table

    assert table.currency == "EUR"
    assert (table.limits.ante_min, table.limits.ante_max, table.limits.bonus_max) == (
        100,
        100_000,
        50_000,
    )


def test_table_limits_and_metrics_port_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOLDEM_TABLE_CURRENCY", "NOK")
    monkeypatch.setenv("HOLDEM_TABLE_ANTE_MAX", "5000")
    settings = WalletSettings()

    assert (settings.table.currency, settings.table.limits.ante_max) == ("NOK", 5_000)
    assert settings.metrics_port == 9102


def test_a_minimum_above_the_maximum_is_refused_at_start_up() -> None:
    with pytest.raises(ValidationError):
        WalletSettings(table_ante_min=500, table_ante_max=400)


def test_every_setting_is_described() -> None:
    assert all(f.description for f in WalletSettings.model_fields.values())


def test_the_wallet_reads_commands_and_rounds_and_folds_its_ledger_and_the_rounds() -> None:
    spec = wallet_spec(WalletSettings().table)

    assert (spec.name, spec.inputs, spec.state_roles, spec.book_roles) == (
        "wallet",
        ("commands", "rounds", "admin"),
        ("wallet", "rounds"),  # the bets, deals and reveals (Rebet, payouts' evidence)
        ("tables",),  # the whole table book
    )
    assert spec.commands == {
        "command.place_bet",
        "command.rebet",
        "command.deposit",
        "command.withdraw",
        "command.grant_fun",
        "command.reset_fun",
        "command.set_limits",
        "command.block_player",
        "command.unblock_player",
        "command.acknowledge_reality_check",
        "command.credit_promo",
        "command.grant_free_hands",
        "command.cancel_free_hands",
        "command.play_free_hand",
        "admin.create_table",
        "admin.change_table",
        "admin.close_table",
    }
    assert spec.rejects_unreadable == {"commands", "admin"}
