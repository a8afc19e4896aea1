"""Snapshots (ADR 010): a state folded from a random history loads back equal, and a snapshot
that is not one the service wrote is refused with SnapshotError, never half-loaded."""

from __future__ import annotations

import contextlib
from types import ModuleType
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.dealer_runs import Run, actions
from support.settlement import SETTLEMENT
from support.wallet_histories import HISTORIES, run

from holdem.dealer import snapshot as dealer_snapshot
from holdem.settlement import snapshot as settlement_snapshot
from holdem.wallet import snapshot as wallet_snapshot

CODECS = [dealer_snapshot, wallet_snapshot, settlement_snapshot]
SCRIPTS = st.lists(actions, max_size=40)


def dealer_and_settlement(script: list[tuple[Any, ...]]) -> tuple[Any, Any]:
    """The dealer's state after ``script``, and settlement's after deciding its rounds log."""
    dealer = Run()
    for action in script:
        dealer.act(action)
    state = SETTLEMENT.initial_state()
    for event in dealer.log:
        if event.TOPIC == "rounds":
            state, _ = SETTLEMENT.when(state, event)
    return dealer.state, state


@settings(max_examples=200, deadline=None)
@given(SCRIPTS)
def test_dealer_and_settlement_states_load_back_equal(script: list[tuple[Any, ...]]) -> None:
    dealer, settlement = dealer_and_settlement(script)

    assert dealer_snapshot.load_state(dealer_snapshot.dump_state(dealer)) == dealer
    assert settlement_snapshot.load_state(settlement_snapshot.dump_state(settlement)) == settlement


@settings(max_examples=200, deadline=None)
@given(HISTORIES)
def test_wallet_states_load_back_equal(steps: list[Any]) -> None:
    state, _ = run(steps)

    raw = wallet_snapshot.dump_state(state)
    assert wallet_snapshot.load_state(raw) == state
    assert wallet_snapshot.dump_state(wallet_snapshot.load_state(raw)) == raw


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every value inside a decoded JSON document."""
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    found = [path] if path else []
    for key, inner in items:
        found += leaves(inner, (*path, key))
    return found


def replaced(document: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[path[0]] = replaced(document[path[0]], path[1:], new)
    return copy


def a_snapshot_of(codec: ModuleType, script: list[tuple[Any, ...]], steps: list[Any]) -> bytes:
    if codec is wallet_snapshot:
        return codec.dump_state(run(steps)[0])
    dealer, settlement = dealer_and_settlement(script)
    return codec.dump_state(dealer if codec is dealer_snapshot else settlement)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.SERVICE)
@settings(max_examples=150, deadline=None)
@given(script=SCRIPTS, steps=HISTORIES, data=st.data())
def test_a_tampered_snapshot_loads_as_a_checked_state_or_is_refused(
    codec: ModuleType, script: list[tuple[Any, ...]], steps: list[Any], data: st.DataObject
) -> None:
    document = orjson.loads(a_snapshot_of(codec, script, steps))
    path = data.draw(st.sampled_from(leaves(document)))
    tampered = orjson.dumps(replaced(document, path, data.draw(JSON)))

    with contextlib.suppress(codec.SnapshotError):  # the only exception it may raise
        codec.load_state(tampered)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.SERVICE)
@given(raw=st.binary(max_size=64))
def test_bytes_that_are_no_snapshot_are_refused(codec: ModuleType, raw: bytes) -> None:
    with pytest.raises(codec.SnapshotError):
        codec.load_state(raw)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.SERVICE)
def test_another_services_snapshot_or_an_unknown_version_is_refused(codec: ModuleType) -> None:
    others = [other for other in CODECS if other is not codec]
    document = orjson.loads(a_snapshot_of(codec, [], []))

    for bad in (
        {**document, "version": codec.SNAPSHOT_VERSION + 1},
        {**document, "version": float(codec.SNAPSHOT_VERSION)},
        {**document, "service": others[0].SERVICE},
        [document],
    ):
        with pytest.raises(codec.SnapshotError, match="snapshot"):
            codec.load_state(orjson.dumps(bad))
    assert issubclass(codec.SnapshotError, ValueError)
