"""The three services' processors in one process, in memory (issue 28): CPU per round of
deciding alone, without Kafka, and the cost counters per round.

Each round: a PlaceBet and a Call (always call) for a player funded once; every record a
processor publishes goes to each processor that reads its topic, as the brokers would hand it
on (one record a batch, with its headers). Printed: rounds, CPU ms per round (process_time,
best of ``--repeat``), and per round the records consumed, the parses (``validate_json`` calls)
and the validations of each service's own events. Never asserted: the counters are in
tests/service/test_cost_counters.py.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
import time
import uuid
from collections import Counter, deque
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry

from holdem.core import contracts
from holdem.core.contracts import Call, Deposit, PlaceBet, dump
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import ROLES, Topics
from holdem.dealer.app import dealer_spec
from holdem.dealer.settings import DealerSettings
from holdem.dealer.vault import Vault, parse_keys
from holdem.runtime.logging import configure_logging
from holdem.runtime.metrics import Metrics
from holdem.runtime.processor import Processor
from holdem.runtime.transport import Record
from holdem.settlement.app import settlement_spec
from holdem.settlement.settings import SettlementSettings
from holdem.wallet.app import wallet_spec
from holdem.wallet.settings import WalletSettings

PARTITIONS = 3
TOPICS = Topics()
ROLE_OF = {TOPICS.name(role): role for role in ROLES}
VAULT = Vault(parse_keys("bench-1:" + base64.b64encode(bytes(32)).decode()), "bench-1")


class Outbox:
    """What a processor publishes, handed on by the pump."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    async def send(self, records: Sequence[Record]) -> None:
        self.records.extend(records)

    async def flush(self) -> None: ...


class Counting:
    """A contracts adapter counting ``validate_json`` by (the service parsing, the type)."""

    def __init__(self, adapter: Any, counts: Counter[tuple[str, str]], who: list[str]) -> None:
        self._adapter, self._counts, self._who = adapter, counts, who

    def validate_json(self, raw: bytes | str, **kwargs: Any) -> Any:
        found = self._adapter.validate_json(raw, **kwargs)
        self._counts[(self._who[0], str(getattr(found, "type", "?")))] += 1
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


class Pipeline:
    def __init__(self) -> None:
        specs = {
            "wallet": wallet_spec(WalletSettings().table),
            "dealer": dealer_spec(DealerSettings().table, VAULT),
            "settlement": settlement_spec(SettlementSettings()),
        }
        self.services = {
            name: Processor(spec, TOPICS, Outbox(), Metrics(CollectorRegistry()), partitions=3)  # type: ignore[arg-type]
            for name, spec in specs.items()
        }
        self.offsets: Counter[str] = Counter()
        self.consumed = 0
        self.written: dict[str, set[str]] = {name: set() for name in specs}
        self.who = [""]  # the service processing a record now

    async def pump(self, topic: str, key: bytes, value: bytes, headers: tuple[Any, ...]) -> None:
        queue = deque([(topic, key, value, headers)])
        while queue:
            topic, key, value, headers = queue.popleft()
            role = ROLE_OF[topic]
            partition = partition_for_key(key, PARTITIONS)
            offset = self.offsets[topic]
            self.offsets[topic] += 1
            for name, processor in self.services.items():
                if role not in processor.spec.inputs:
                    continue
                kind = dict(headers).get("type")
                if not processor.wants(topic, kind):
                    continue
                self.consumed += 1
                self.who[0] = name
                async with processor.lock:
                    await processor.process(topic, partition, offset, value, key, headers)
                out: Outbox = processor.outbox  # type: ignore[assignment]
                for record in out.records:
                    self.written[name].add(record.kind)
                    queue.append(
                        (
                            record.topic,
                            record.key.encode(),
                            record.value,
                            tuple(record.header_list()),
                        )
                    )
                out.records.clear()

    async def command(self, message: Any) -> None:
        await self.pump(TOPICS.commands, message.player_id.encode(), dump(message), ())


def envelope(player_id: str) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "command_id": uuid.uuid4().hex,
        "player_id": player_id,
        "occurred_at": datetime.now(UTC),
    }


async def run(rounds: int, players: int) -> dict[str, Any]:
    pipeline = Pipeline()
    ids = [f"bench-p{n:04d}" for n in range(players)]
    for player in ids:
        await pipeline.command(Deposit(**envelope(player), currency="EUR", amount=10**9))
    counts: Counter[tuple[str, str]] = Counter()
    for role, adapter in list(contracts.ADAPTERS.items()):
        contracts.ADAPTERS[role] = Counting(adapter, counts, pipeline.who)
    consumed = pipeline.consumed
    started = time.process_time()
    try:
        for number in range(rounds):
            player = ids[number % players]
            round_id = f"{player}-b{number:06d}"
            bet = PlaceBet(
                **envelope(player), round_id=round_id, ante=100, aa_bonus=0, currency="EUR"
            )
            await pipeline.command(bet)
            await pipeline.command(Call(**envelope(player), round_id=round_id))
    finally:
        cpu = time.process_time() - started
        for role, adapter in list(contracts.ADAPTERS.items()):
            contracts.ADAPTERS[role] = adapter._adapter
    own = {
        name: sum(counts[(name, kind)] for kind in kinds)
        for name, kinds in pipeline.written.items()
    }
    return {
        "rounds": rounds,
        "cpu_ms_per_round": round(1000 * cpu / rounds, 3),
        "consumed_per_round": round((pipeline.consumed - consumed) / rounds, 2),
        "parses_per_round": round(sum(counts.values()) / rounds, 2),
        "own_events_parsed_per_round": {k: round(v / rounds, 2) for k, v in own.items()},
    }


def main(argv: list[str]) -> None:
    configure_logging("bench", "WARNING")  # as a service at its default level: no debug lines
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--players", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args, _ = parser.parse_known_args(argv)
    results = [asyncio.run(run(args.rounds, args.players)) for _ in range(args.repeat)]
    best = min(results, key=lambda r: r["cpu_ms_per_round"])
    print(f"pipeline in memory (wallet, dealer, settlement; best of {args.repeat}): {best}")


if __name__ == "__main__":
    main(sys.argv[1:])
