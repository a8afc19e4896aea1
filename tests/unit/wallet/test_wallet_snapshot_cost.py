"""What a wallet snapshot costs, counted (issue 28: restart and snapshot time are the loop's).

The wallet writes v6 and reads v7 (ADR 032). Its load validated every body strictly as v7
first, which fails on the version field only after the whole document is checked, and then
parsed and validated it again as the upgraded v7: half of a load's CPU. A body of an older
version now goes to its upgrade at once (``snapshot_codec.head_version``). Its dump sorted
every (player, key) pair it applied: half of a dump's CPU; it now sorts each player's keys,
which writes the same document."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from support.wallet_histories import HISTORIES, run

from holdem.core import snapshot_codec
from holdem.wallet import snapshot as wallet_snapshot


class Counting:
    """The snapshot body's adapter, counting its validations."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.validations = 0

    def validate_json(self, *args: Any, **kwargs: Any) -> Any:
        self.validations += 1
        return self.adapter.validate_json(*args, **kwargs)


@pytest.mark.parametrize("version", [wallet_snapshot.SNAPSHOT_WRITES, 7])
@settings(max_examples=30, deadline=None)
@given(steps=HISTORIES)
def test_a_snapshot_is_validated_once(version: int, steps: list[Any]) -> None:
    """v6 (what this release writes) and v7 (what the next one writes) alike."""
    state, _ = run(steps)
    raw = wallet_snapshot.dump_state(state, version=version)
    assert snapshot_codec.head_version(raw) == version
    counting = Counting(wallet_snapshot.BODY)
    wallet_snapshot.BODY = counting  # type: ignore[assignment]
    try:
        assert wallet_snapshot.load_state(raw) == state
    finally:
        wallet_snapshot.BODY = counting.adapter
    assert counting.validations == 1


@settings(max_examples=50, deadline=None)
@given(HISTORIES)
def test_the_dump_does_not_depend_on_the_order_keys_were_applied_in(steps: list[Any]) -> None:
    state, _ = run(steps)
    pairs = list(state.applied)
    random.Random(len(pairs)).shuffle(pairs)
    shuffled = replace(state, applied=set(reversed(pairs)))
    raw = wallet_snapshot.dump_state(state)

    assert wallet_snapshot.dump_state(shuffled) == raw
    players = [player for player, _ in sorted(state.applied)]
    document = wallet_snapshot.BODY.validate_json(
        wallet_snapshot.dump_state(state, version=7), strict=True
    )
    assert list(document.applied) == sorted(set(players))
    assert all(keys == sorted(keys) for keys in document.applied.values())
