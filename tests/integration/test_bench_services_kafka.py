"""Issue 28's guard: a short ``bench/run.py services`` (the services, then the bare relay, on
the test broker) runs to its end and prints its table, so that a contract change that breaks
the relay or the load fails here instead of hanging the next measurement. Its figures are
printed, never asserted (the machine's load moves them); what is asserted waits for the runs'
records to converge first: every round a bet was placed for, through the services and through
the relay, ends with the same topics and types of records."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from support.kafka import Cluster

from holdem.core.wire.topics import Topics

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_services import PROBE_ROUNDS, compare, table
from services_relay import published

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

ROUNDS, PLAYERS = 200, 20


async def test_a_short_services_bench_and_its_relay_play_every_round_to_the_same_records(
    kafka: Cluster, topics: Topics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(rounds=ROUNDS, players=PLAYERS, rate=10.0, seconds=3.0)
    result = await compare(kafka.bootstrap, kafka.principals, topics, args, tmp_path)
    with capsys.disabled():  # CI's log shows the same-run ratios on every run
        print("\n" + table(result), flush=True)

    # compare() returns only once every placed bet's round has all its records (it waits, with
    # a bound, and fails naming the rounds that never completed): those are counted here.
    services, relay = result["rounds_complete"]["services"], result["rounds_complete"]["relay"]
    assert services >= ROUNDS + PROBE_ROUNDS and relay >= ROUNDS
    per_type = {kind: 1.0 for _, kind in published()}
    assert result["records_per_round"]["services"] == per_type
    assert result["records_per_round"]["relay"] == per_type
