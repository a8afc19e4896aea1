"""Hypothesis strategies for hostile records on the commands topic: arbitrary bytes, Unicode ids,
near-valid JSON with one field dropped or retyped, wrong keys and partitions."""

from __future__ import annotations

import json
import warnings
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisDeprecationWarning

from holdem.core.wire.partitioning import partition_for_key

AT = "2026-01-01T00:00:00Z"
VALID: list[dict[str, Any]] = [
    {"type": "command.deposit", "currency": "EUR", "amount": 500},
    {"type": "command.withdraw", "currency": "EUR", "amount": 5},
    {"type": "command.place_bet", "round_id": "r1", "currency": "EUR", "ante": 10, "aa_bonus": 5},
    {"type": "command.call", "round_id": "r1"},
    {"type": "command.fold", "round_id": "r1"},
    {"type": "command.void_round", "round_id": "r1"},
]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
# Fields a mutation may drop or retype; the ids that make a record unique are left alone so that
# every generated record is a distinct command (a true resend is answered once, by design).
FIELDS = ["type", "version", "round_id", "occurred_at", "currency", "amount", "ante",
          "aa_bonus", "mode"]  # fmt: skip
PLAYERS = ["p1", "hé", "p 1", "a" * 65, "ok-2", "p1\u200b"]
BAD_IDS = ["ç1", "", "c" * 65]


@st.composite
def near_valid(draw: st.DrawFn, unique: bool = False) -> tuple[bytes, str]:
    """A valid command, then one field dropped or retyped, or a Unicode or overlong id (or left
    alone). ``unique``: fresh event and command ids, so no two records are the same command."""
    player = draw(st.sampled_from(PLAYERS))
    fresh = st.uuids().map(lambda u: u.hex) if unique else st.just("c1")
    body = {
        **draw(st.sampled_from(VALID)),
        "event_id": draw(st.uuids().map(lambda u: u.hex)) if unique else "e1",
        "command_id": draw(fresh | st.sampled_from(BAD_IDS)),
        "player_id": player,
        "occurred_at": AT,
    }
    change = draw(st.sampled_from(["keep", "drop", "retype"]))
    name = draw(st.sampled_from(FIELDS))
    if change == "drop":
        body.pop(name, None)
    elif change == "retype":
        body[name] = draw(JSON_VALUES)
    return json.dumps(body).encode(), player


@st.composite
def hostile_records(
    draw: st.DrawFn, partitions: int, unique: bool = False
) -> tuple[bytes, bytes | None, int]:
    """(value, key, partition): mostly the partition murmur2 gives the key, sometimes not."""
    if draw(st.booleans()):
        raw, player = draw(near_valid(unique))
    else:
        raw, player = draw(st.binary(max_size=200)), ""
    key = draw(st.sampled_from([player.encode(), None, b"p1"]) | st.binary(max_size=8))
    right = partition_for_key(key, partitions) if key else 0
    partition = draw(st.sampled_from([right, right, (right + 1) % partitions]))
    return raw, key, partition


def generate(partitions: int, count: int) -> list[tuple[bytes, bytes | None, int]]:
    """``count`` distinct ``hostile_records(partitions, unique=True)``, as Hypothesis generates
    them (no shrinking, no database). Meant for a process of its own (``spawn``): Hypothesis
    checks that a draw leaves the global ``random`` state alone, and in a thread beside running
    services another thread's ``random`` use (aiokafka's fetcher shuffles its partitions) made
    that check warn ``HypothesisDeprecationWarning`` falsely, and flakily. Here a warning of
    that kind is an error: in a process of its own it can only be the strategy's."""
    sent: list[tuple[bytes, bytes | None, int]] = []

    @settings(max_examples=count, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])  # fmt: skip
    @given(record=hostile_records(partitions, unique=True))
    def collect(record: tuple[bytes, bytes | None, int]) -> None:
        sent.append(record)

    with warnings.catch_warnings():
        warnings.simplefilter("error", HypothesisDeprecationWarning)
        collect()
    return sent
