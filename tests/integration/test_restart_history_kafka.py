"""The restart benchmark's history is what the services would have written: produced in bulk
(bench/bench_restart.py), the services fold it without a rejection, hold the balances it ends
with, and play on from it; the audit's invariants hold over the history and the live rounds."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
from support.dealer import VAULT
from support.kafka import Cluster
from support.messages import command
from support.stack import Stack

from holdem.core.contracts import Call, PlaceBet
from holdem.core.wire.topics import Topics
from holdem.runtime.topic_setup import ensure_topics

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_replay import fill, generate
from bench_restart import MIXED, commit_inputs, players_per_partition

pytestmark = pytest.mark.kafka
ROUNDS, PLAYERS = 200, 20
REFUSALS = {
    "round.bet_rejected",
    "round.command_rejected",
    "round.malfunction",
    "round.voided",
    "wallet.rejected",
    "rejected.message",
}


async def test_services_fold_the_generated_history_and_play_on_from_it(kafka: Cluster) -> None:
    topics = Topics.unique("history")
    await ensure_topics(kafka.admin, topics, 3)
    balances: dict[str, int] = {}
    counts = await fill(kafka.admin, topics, generate(ROUNDS, PLAYERS, MIXED, VAULT, balances))
    assert counts == {"vault": ROUNDS, "rounds": 5 * ROUNDS, "wallet": PLAYERS + 4 * ROUNDS}
    await commit_inputs(kafka.admin, topics)
    stack = Stack(kafka, topics)
    await stack.open()  # each service replays the history: no snapshot yet
    try:
        services = stack.services.values()
        await stack.wait_for(  # every partition has history: each is folded once replayed
            lambda: all(sorted(s.processor.states) == [0, 1, 2] for s in services), "replays"
        )
        for player, available in balances.items():
            assert list(stack.balances(player).values()) == [(available, 0)], player
        for name, service in stack.services.items():
            spec, states = service.processor.spec, service.processor.states.values()
            assert spec.open_rounds is not None
            assert sum(spec.open_rounds(state) for state in states) == 0, name

        live = players_per_partition(PLAYERS)
        for player in live:
            round_id = f"{player}-live-{uuid.uuid4().hex[:6]}"
            await stack.send(command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10))
            await stack.event(player, "round.dealt", round_id)
            await stack.send(command(Call, player, round_id=round_id))
            await stack.event(player, "wallet.payout_credited", round_id)
        await stack.assert_sound(*balances)
        kinds = {record.message.type for record in stack.records(*balances) if record.message}
        assert not kinds & REFUSALS
        assert {"round.folded", "round.called", "wallet.call_released"} <= kinds  # mixed play
    finally:
        await stack.close()
