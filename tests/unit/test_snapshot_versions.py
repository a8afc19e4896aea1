"""Snapshots of an older format still load (ADR 010): a service upgraded over a snapshot topic
its previous release wrote starts from those snapshots, not from a full replay.

The fixtures are snapshots written by the codecs of commit cb0c72b (dealer v2, wallet v3,
settlement v1, query v2: tests/fixtures/snapshots), dealer-v3.json by the dealer's v3 codec
of commit 5332cc5 (before forced decks, ADR 030), wallet-v4.json by the wallet's v4 codec of
commit bb74a0b and wallet-v5.json by its v5 codec of commit 2a45df5 (promotions, before player
protection); ``support.old_snapshots`` keeps those encoders, so random states are written in
the old format too."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import old_snapshots
from support.dealer_runs import Run, actions
from support.protection import protected_state
from support.settlement import SETTLEMENT
from support.wallet_histories import HISTORIES, run

from holdem.dealer import snapshot as dealer_snapshot
from holdem.query import snapshot as query_snapshot
from holdem.settlement import snapshot as settlement_snapshot
from holdem.wallet import snapshot as wallet_snapshot

FIXTURES = Path(__file__).parent.parent / "fixtures" / "snapshots"
OLD: list[tuple[ModuleType, str, Any]] = [
    (dealer_snapshot, "dealer-v2.json", old_snapshots.dealer_v2),
    (dealer_snapshot, "dealer-v3.json", old_snapshots.dealer_v3),
    (wallet_snapshot, "wallet-v3.json", old_snapshots.wallet_v3),
    (wallet_snapshot, "wallet-v4.json", old_snapshots.wallet_v4),
    (wallet_snapshot, "wallet-v5.json", old_snapshots.wallet_v5),
    (settlement_snapshot, "settlement-v1.json", old_snapshots.settlement_v1),
]


@pytest.mark.parametrize(("codec", "name", "old"), OLD, ids=lambda v: getattr(v, "SERVICE", ""))
def test_a_snapshot_the_previous_release_wrote_loads_whole(
    codec: ModuleType, name: str, old: Any
) -> None:
    raw = (FIXTURES / name).read_bytes()

    state = codec.load_state(raw)

    assert orjson.loads(old(state)) == orjson.loads(raw)  # nothing of it was lost
    rewritten = codec.dump_state(state)
    written = getattr(codec, "SNAPSHOT_WRITES", codec.SNAPSHOT_VERSION)  # ADR 032
    assert orjson.loads(rewritten)["version"] == written
    assert codec.load_state(rewritten) == state


def test_the_fixtures_hold_what_the_old_formats_could_say() -> None:
    dealer = dealer_snapshot.load_state((FIXTURES / "dealer-v2.json").read_bytes())
    wallet = wallet_snapshot.load_state((FIXTURES / "wallet-v3.json").read_bytes())
    settlement = settlement_snapshot.load_state((FIXTURES / "settlement-v1.json").read_bytes())
    promoted = wallet_snapshot.load_state((FIXTURES / "wallet-v5.json").read_bytes())

    assert dealer.sessions and dealer.commands and any(r.sealed for r in dealer.rounds.values())
    assert wallet.bridges.pending and wallet.evidence and wallet.commands and wallet.rounds
    assert settlement.history and settlement.open_rounds == 1
    assert promoted.campaigns and promoted.promo
    assert any(stake.campaign_id for stake in promoted.rounds.values())


def test_the_query_snapshot_of_the_previous_release_loads() -> None:
    raw = (FIXTURES / "query-v2.json").read_bytes()

    state = query_snapshot.load_state(raw)

    # v3 (issue 29) adds a player's campaigns, limits, block and sessions: none in a v2 state.
    dumped = orjson.loads(query_snapshot.dump_state(state))
    assert state.books and dumped["version"] == 3
    added = {"campaigns": [], "counted": [], "limits": [], "blocked": None, "sessions": []}
    for book in dumped["books"].values():
        assert {key: book.pop(key) for key in added} == added
    assert {**dumped, "version": 2} == orjson.loads(raw)


def a_dealer_and_settlement(script: list[tuple[Any, ...]]) -> tuple[Any, Any]:
    dealer = Run()
    for action in script:
        dealer.act(action)
    state = SETTLEMENT.initial_state()
    for event in dealer.log:
        if event.TOPIC == "rounds":
            state, _ = SETTLEMENT.when(state, event)
    return dealer.state, state


@settings(max_examples=100, deadline=None)
@given(st.lists(actions, max_size=40))
def test_dealer_states_written_in_the_v3_format_load_equal(script: list[tuple[Any, ...]]) -> None:
    dealer, _ = a_dealer_and_settlement(script)

    assert dealer_snapshot.load_state(old_snapshots.dealer_v3(dealer)) == dealer


@settings(max_examples=100, deadline=None)
@given(st.lists(actions, max_size=40))
def test_dealer_and_settlement_states_written_in_the_old_formats_load_equal(
    script: list[tuple[Any, ...]],
) -> None:
    dealer, settlement = a_dealer_and_settlement(script)

    # What v2 could not say (the bets still with the wallet, ADR 024; the watchdog's evidence,
    # ADR 025) loads as nothing: a v2 snapshot's dealer learns them from the log's tail.
    said = replace(dealer, pending={}, settled_upto=None)
    assert dealer_snapshot.load_state(old_snapshots.dealer_v2(dealer)) == said
    assert settlement_snapshot.load_state(old_snapshots.settlement_v1(settlement)) == settlement


@settings(max_examples=100, deadline=None)
@given(HISTORIES)
def test_wallet_states_written_in_the_old_format_load_equal(steps: list[Any]) -> None:
    state, _ = run(steps)

    assert wallet_snapshot.load_state(old_snapshots.wallet_v3(state)) == state
    assert wallet_snapshot.load_state(old_snapshots.wallet_v4(state)) == state
    assert wallet_snapshot.load_state(old_snapshots.wallet_v5(state)) == state


def test_a_wallet_snapshot_keeps_what_protects_the_player() -> None:
    state = protected_state()

    loaded = wallet_snapshot.load_state(wallet_snapshot.dump_state(state))

    assert loaded == state and loaded.protection.plays and loaded.protection.of_round
    assert loaded.protection.limits and loaded.protection.blocked and loaded.protection.days
