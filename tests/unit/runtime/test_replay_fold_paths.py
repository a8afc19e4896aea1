"""A rebuild's replay (issue 28 item 5) against the reference fold. The rebuild merges a
partition's topics in write order, skips unparsed what its type header says the service does
not read (asking ``wanted`` once per topic and type), and folds the rest through
``Processor.fold`` (headers, parse, key and partition checks, the service's evolve). The
reference parses every record of the service's state topics and folds it with the service's
``evolve``, nothing skipped. On a generated history, calls and folds, with and without the AA
Bonus, both must leave every partition in the same state."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from prometheus_client import CollectorRegistry

from holdem.core.contracts import dump, parse
from holdem.core.wire.headers import TYPE_HEADER
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import Topics
from holdem.dealer.app import dealer_spec
from holdem.dealer.settings import DealerSettings
from holdem.runtime.metrics import Metrics
from holdem.runtime.processor import Processor, Spec
from holdem.runtime.replay import Merge
from holdem.runtime.transport import TopicPartition
from holdem.settlement.app import settlement_spec
from holdem.settlement.settings import SettlementSettings
from holdem.wallet.app import wallet_spec
from holdem.wallet.settings import WalletSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_replay import VAULT, generate
from bench_restart import MIXED

PARTITIONS = 3
ROUNDS, PLAYERS = 120, 7
SPECS: dict[str, Callable[[], Spec[Any]]] = {
    "dealer": lambda: dealer_spec(DealerSettings().table, VAULT),
    "settlement": lambda: settlement_spec(SettlementSettings()),
    "wallet": lambda: wallet_spec(WalletSettings().table),
}


class Fetched(NamedTuple):
    """What the merge reads of a fetched record (aiokafka's ConsumerRecord fields)."""

    timestamp: int
    value: bytes
    key: bytes
    headers: tuple[tuple[str, bytes], ...]


class Written(NamedTuple):
    role: str
    partition: int
    record: Fetched


def history(topics: Topics) -> list[Written]:
    """Every record of the generated history, in the order written (a millisecond apart)."""
    written = []
    for stamp, (role, event) in enumerate(generate(ROUNDS, PLAYERS, MIXED, VAULT)):
        key = event.player_id.encode()
        headers = ((TYPE_HEADER, event.type.encode()),)
        record = Fetched(stamp, dump(event), key, headers)
        written.append(Written(role, partition_for_key(key, PARTITIONS), record))
    return written


def rebuilt(spec: Spec[Any], topics: Topics, log: list[Written], asked: Counter[Any]) -> Any:
    """The states as a rebuild's replay folds the log; ``asked`` counts ``wanted``'s calls."""
    proc = Processor(spec, topics, outbox=None, metrics=Metrics(CollectorRegistry()))  # type: ignore[arg-type]
    proc.partitions = PARTITIONS
    inputs = {topics.name(role) for role in spec.inputs}

    def wanted(topic: str, kind: bytes | None) -> bool:  # as holdem.runtime.rebuild's
        asked[topic, kind] += 1
        return topic not in inputs or proc.wants(topic, kind)

    names = [topics.name(role) for role in spec.state_roles]
    merge = Merge(names, range(PARTITIONS), set(), wanted, proc.fold)
    for role, partition, record in log:
        if role in spec.state_roles:
            merge.add(TopicPartition(topics.name(role), partition), [record])  # type: ignore[list-item]
    merge.apply(len(log))
    assert not merge.buffered()
    return proc.states


def reference(spec: Spec[Any], log: list[Written]) -> dict[int, Any]:
    """Each partition's state with every record of its state topics parsed and evolved."""
    states = {p: spec.initial_state() for p in range(PARTITIONS)}
    for role, partition, record in log:
        if role in spec.state_roles:
            states[partition] = spec.evolve(states[partition], parse(role, record.value))
    return states


@pytest.mark.parametrize("name", sorted(SPECS))
def test_a_rebuild_s_replay_leaves_the_state_the_reference_fold_leaves(name: str) -> None:
    topics = Topics.unique("paths")
    log = history(topics)
    asked: Counter[Any] = Counter()
    states = rebuilt(SPECS[name](), topics, log, asked)
    expected = reference(SPECS[name](), log)
    assert sorted(states) == list(range(PARTITIONS))
    for partition in range(PARTITIONS):
        assert states[partition] == expected[partition], f"partition {partition}"
    assert states != reference(SPECS[name](), log[: len(log) // 2])  # the fold is not empty


@pytest.mark.parametrize("name", sorted(SPECS))
def test_a_replay_asks_whether_it_wants_a_type_once_per_topic(name: str) -> None:
    """A cost counter: ``wanted`` is asked once per (topic, type header) a replay meets, not
    once per record (it was, at about a fifth of a bare read)."""
    topics = Topics.unique("asked")
    spec = SPECS[name]()
    log = history(topics)
    asked: Counter[Any] = Counter()
    rebuilt(spec, topics, log, asked)
    met = {(topics.name(w.role), w.record.headers[0][1]) for w in log if w.role in spec.state_roles}
    assert set(asked) == met
    assert set(asked.values()) == {1}
    assert len(met) < sum(w.role in spec.state_roles for w in log) / 50
