"""aiokafka's private API is touched in one module, which refuses releases it was not tested on."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import aiokafka
import pytest

REPO = Path(__file__).resolve().parents[3]
PRIVATE = ("_coordinator", "_subscription", "_rejoin_needed_fut", "_txn_manager", "_sender")


def test_only_kafka_internals_reads_aiokafka_private_attributes() -> None:
    offenders = []
    for root in (REPO / "shared", REPO / "services"):
        for path in root.rglob("*.py"):
            if path.name == "kafka_internals.py":
                continue
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                name = None
                if isinstance(node, ast.Attribute):
                    name = node.attr
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    name = node.value
                if name in PRIVATE:
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno} {name}")
    assert offenders == []


def test_an_untested_aiokafka_release_is_refused_at_import(monkeypatch: pytest.MonkeyPatch) -> None:
    importlib.import_module("holdem.runtime.kafka_internals")  # the runtime's loop does not
    monkeypatch.setattr(aiokafka, "__version__", "0.99.0")
    monkeypatch.delitem(sys.modules, "holdem.runtime.kafka_internals")
    with pytest.raises(ImportError, match="tested with aiokafka"):
        importlib.import_module("holdem.runtime.kafka_internals")
    monkeypatch.undo()
    importlib.import_module("holdem.runtime.kafka_internals")


async def test_a_partition_without_a_fetch_position_has_no_known_position_and_none_waits() -> None:
    from holdem.runtime.kafka_internals import known_position

    consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers="localhost:1")  # never connects
    tp = aiokafka.TopicPartition("holdem.commands", 0)
    try:
        assert known_position(consumer, tp) is None  # not assigned
        consumer.assign([tp])
        assert known_position(consumer, tp) is None  # assigned, its committed offset not fetched
        consumer._subscription.seek(tp, 7)  # what the fetcher does once it has the offset
        assert known_position(consumer, tp) == 7
    finally:
        await consumer.stop()
