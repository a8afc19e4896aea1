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
