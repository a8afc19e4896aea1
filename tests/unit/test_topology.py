"""The one topology table (holdem.core.topology) against what runs: every service's Spec, the
back office's projection, the command owners, the models' topics and the docs page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.dealer import VAULT

from holdem.backoffice import project
from holdem.core.contracts import ALL_MODELS, COMMAND_OWNERS, Command, models_of
from holdem.core.topology import BACKOFFICE, PARTIES, SEAMLESS_BACKOFFICE, SYSTEM
from holdem.core.wire.topics import ROLES
from holdem.dealer.app import dealer_spec
from holdem.dealer.settings import DealerSettings
from holdem.query.app import query_spec
from holdem.query.settings import QuerySettings
from holdem.runtime.processor import Spec
from holdem.settlement.app import settlement_spec
from holdem.settlement.settings import SettlementSettings
from holdem.wallet.app import seamless_spec, wallet_spec
from holdem.wallet.settings import WalletSettings

ROOT = Path(__file__).resolve().parents[2]


def specs() -> dict[str, Spec[Any]]:
    wallet = WalletSettings()
    return {
        "dealer": dealer_spec(DealerSettings().table, VAULT),
        "wallet": wallet_spec(wallet.table),
        "wallet-seamless": seamless_spec(wallet.table, wallet.timing),
        "settlement": settlement_spec(SettlementSettings()),
        "query": query_spec(QuerySettings()),
    }


@pytest.mark.parametrize("name", list(SYSTEM))
def test_every_service_spec_is_its_row_of_the_topology(name: str) -> None:
    spec, party = specs()[name], SYSTEM[name]
    assert spec.inputs == party.reads
    assert spec.state_roles == party.folds
    assert spec.book_roles == party.book
    assert spec.outputs == party.writes
    # A rounds writer reports the round of a decision that raised (holdem.runtime.dead_letter).
    assert (spec.on_failure is not None) == ("rounds" in spec.outputs)


def test_the_topology_names_every_service_built_here() -> None:
    assert set(specs()) == set(SYSTEM)


def test_the_back_office_projection_reads_its_rows_of_the_topology() -> None:
    assert SEAMLESS_BACKOFFICE.reads == project.ROLES
    assert BACKOFFICE.reads == SEAMLESS_BACKOFFICE.reads[: len(BACKOFFICE.reads)]
    assert not BACKOFFICE.writes


def test_each_command_is_answered_by_a_service_that_reads_the_commands() -> None:
    for owner, types in COMMAND_OWNERS.items():
        assert types and "commands" in SYSTEM[owner].reads, owner
    for model in models_of("commands") + models_of("admin"):
        assert issubclass(model, Command) or model.TOPIC == "admin"
        owner = getattr(model, "OWNER", "")
        assert model.TOPIC in SYSTEM[owner].reads, model.__name__


def test_every_role_a_model_is_on_is_written_and_read_by_some_party() -> None:
    written = {r for party in PARTIES.values() for r in party.writes} | {"rejected"}
    read = {r for party in PARTIES.values() for r in (*party.reads, *party.folds, *party.book)}
    topics = {model.TOPIC for model in ALL_MODELS}
    assert topics == set(ROLES)
    assert topics <= written and topics <= read


def test_the_docs_page_shows_the_current_topology() -> None:
    script = ROOT / "scripts" / "render_topology.py"
    checked = subprocess.run([sys.executable, str(script), "--check"], check=False)
    assert checked.returncode == 0, "run: uv run python scripts/render_topology.py"
