"""Each hop of a round timed from the records' own timestamps (issue 28, item 3).

A hop is a record the script's service answers (its trigger: a command, or an event of the round)
and the first record it answers with (``services_relay.SCRIPT``), paired by round id. From the
Kafka timestamp of each (the producer's clock when the record was sent, CreateTime) and the
answer's ``occurred_at`` (the service's clock when it decided, ``Context.now``):
- hop: trigger sent -> answer sent (what the next reader can see a commit later);
- decide: trigger sent -> answer decided (the trigger's transaction, its fetch by the service,
  the batch it waits in, and the decision);
- produce: answer decided -> answer sent (the rest of its batch decided, then the send).
The relay's records are copies of a template round (its ``occurred_at`` is the template's), so
only its hop is timed. Rounds are those of the open-loop run (ids ``...-l<n>``, bench_services).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from services_relay import SCRIPT

from holdem.core.wire.connection import KafkaConnection
from holdem.harness.load import percentile

ROLES = ("commands", "rounds", "wallet", "vault")
OPEN_LOOP = re.compile(r"-l\d{6}$")  # the round ids of bench_services' open-loop rounds


class Timed(NamedTuple):
    kind: str
    round_id: str
    sent_ms: int  # the record's Kafka timestamp
    decided_ms: float | None  # its occurred_at, ms since the epoch


async def read_committed(
    admin: KafkaConnection, names: Iterable[str], partitions: int
) -> list[tuple[str, ConsumerRecord[Any, Any]]]:
    """(topic, record) of every committed record of ``names``, from their beginning."""
    consumer = AIOKafkaConsumer(
        **admin.kwargs(), isolation_level="read_committed", enable_auto_commit=False
    )
    await consumer.start()
    try:
        tps = [TopicPartition(t, p) for t in names for p in range(partitions)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        found: list[tuple[str, ConsumerRecord[Any, Any]]] = []
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                found.extend((tp.topic, r) for r in records if r.value)
        return found
    finally:
        await consumer.stop()


async def read_timed(admin: KafkaConnection, topics: Any, partitions: int) -> list[Timed]:
    """Every committed record of a round on ``topics``' round roles, with its timestamps."""
    names = [topics.name(role) for role in ROLES]
    found = [timed(r.value, r.timestamp) for _, r in await read_committed(admin, names, partitions)]
    return [t for t in found if t is not None]


def timed(value: bytes, timestamp_ms: int) -> Timed | None:
    body = json.loads(value)
    round_id, kind = body.get("round_id"), body.get("type")
    if not round_id or not kind:
        return None
    occurred = body.get("occurred_at")
    decided = None
    if isinstance(occurred, str):
        decided = datetime.fromisoformat(occurred.replace("Z", "+00:00")).timestamp() * 1000
    return Timed(kind, round_id, timestamp_ms, decided)


def timeline(records: Iterable[Timed], *, decided: bool = True) -> dict[str, dict[str, Any]]:
    """Per hop (trigger -> first answer): p50/p99 ms of hop, and of decide and produce when
    ``decided`` (the answers' occurred_at is their own), over the open-loop rounds."""
    by_round: dict[str, dict[str, Timed]] = {}
    for record in records:
        if OPEN_LOOP.search(record.round_id):
            by_round.setdefault(record.round_id, {}).setdefault(record.kind, record)
    spans: dict[str, dict[str, list[float]]] = {}
    for kinds in by_round.values():
        for trigger, (service, outputs) in SCRIPT.items():
            cause, answer = kinds.get(trigger), kinds.get(outputs[0])
            if cause is None or answer is None:
                continue
            hop = spans.setdefault(f"{trigger} -> {outputs[0]} ({service})", {})
            hop.setdefault("hop", []).append(answer.sent_ms - cause.sent_ms)
            if decided and answer.decided_ms is not None:
                hop.setdefault("decide", []).append(answer.decided_ms - cause.sent_ms)
                hop.setdefault("produce", []).append(answer.sent_ms - answer.decided_ms)
    return {
        name: {
            part: {
                "p50_ms": round(percentile(values, 0.5), 1),
                "p99_ms": round(percentile(values, 0.99), 1),
                "n": len(values),
            }
            for part, values in parts.items()
        }
        for name, parts in spans.items()
    }


def lines(services: dict[str, dict[str, Any]], relay: dict[str, dict[str, Any]]) -> list[str]:
    """The table bench_services prints: each hop's parts, p50/p99 ms, the relay's hop beside."""

    def cell(found: dict[str, Any] | None) -> str:
        return "-" if not found else f"{found['p50_ms']:.0f} / {found['p99_ms']:.0f}"

    out = [
        "per hop, records' own timestamps (ms p50 / p99; decide + produce = hop, services): "
        f"{'hop':>13} {'decide':>13} {'produce':>13} {'relay hop':>13}"
    ]
    for name, parts in services.items():
        out.append(
            f"  {name:62} {cell(parts.get('hop')):>13} {cell(parts.get('decide')):>13} "
            f"{cell(parts.get('produce')):>13} {cell(relay.get(name, {}).get('hop')):>13}"
        )
    return out
