"""The bare batched relay of bench_services: the services' hops and records, without the game.

Three worker processes (wallet, dealer, settlement), each subscribed to the topics its service
reads, each answering the record types that service answers with copies of a real round's
records (round and player ids rewritten), one transaction per poll batch with the batch's offsets
inside it, read_committed: what the services do, minus deciding, state and contracts.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.runtime.kafka import PRODUCE_BATCH_BYTES

# trigger type -> (the service whose hop it is, the record types that hop publishes, in order).
# Commands carry no type header: the relay, like the services, parses them to learn their type.
SCRIPT: dict[str, tuple[str, tuple[str, ...]]] = {
    "command.place_bet": ("wallet", ("round.bet_placed", "wallet.stake_taken", "wallet.call_held")),
    "round.bet_placed": ("dealer", ("vault.deck_sealed", "round.dealt")),
    "command.call": ("dealer", ("round.called",)),
    "round.called": ("settlement", ("round.settled",)),
    "round.settled": (
        "wallet",
        ("wallet.call_captured", "wallet.payout_credited", "round.closed"),
    ),
}
READS = {
    "wallet": ("commands", "rounds"),
    "dealer": ("commands", "rounds"),
    "settlement": ("rounds",),
}
ROLE_OF_TYPE = {"round": "rounds", "wallet": "wallet", "vault": "vault"}
MAX_BATCH = 500  # as the services' loop (holdem.runtime.loop)
# The loop's 50 ms; RELAY_FETCH_MAX_WAIT_MS shows what that wait costs a hop.
FETCH_MAX_WAIT_MS = int(os.environ.get("RELAY_FETCH_MAX_WAIT_MS", "50"))

Template = dict[str, tuple[bytes, str, str]]  # type -> (value, its round_id, its player_id)
Record = tuple[str, str, bytes]  # (topic role, type, value) of a committed record
# Answers to a refused or late command, not a round's path: the relay need not write them.
REFUSALS = ("rejected",)


class StaleRelayError(RuntimeError):
    """The services write records in a round that the relay's SCRIPT does not: the relay would
    no longer be the same hops and records (a client waiting for one would wait out its step)."""


def published() -> set[tuple[str, str]]:
    """(topic role, type) of every record the relay writes."""
    return {(ROLE_OF_TYPE[k.split(".")[0]], k) for _, outputs in SCRIPT.values() for k in outputs}


def written_per_round(records: Iterable[Record]) -> dict[str, set[tuple[str, str]]]:
    """(topic role, type) of the records of each round id among ``records``."""
    rounds: dict[str, set[tuple[str, str]]] = {}
    for role, kind, value in records:
        round_id = json.loads(value).get("round_id")
        if round_id:
            rounds.setdefault(round_id, set()).add((role, kind))
    return rounds


def script_gaps(records: Iterable[Record]) -> tuple[list[str], list[str]]:
    """(missing, extra): "topic/type" the services wrote in a settled round and the relay does
    not write there, and what the relay writes that no settled round of the services holds."""
    settled = [
        kinds
        for kinds in written_per_round(records).values()
        if ("rounds", "round.settled") in kinds
    ]
    if not settled:
        raise StaleRelayError("no settled round among the services' records to compare with")
    services = {
        (role, kind)
        for kinds in settled
        for role, kind in kinds
        if not any(word in kind for word in REFUSALS)
    }
    missing = sorted(f"{role}/{kind}" for role, kind in services - published())
    extra = sorted(f"{role}/{kind}" for role, kind in published() - services)
    return missing, extra


def check_script(records: Iterable[Record]) -> None:
    """StaleRelayError naming the record types the relay and the services' rounds differ by."""
    missing, extra = script_gaps(records)
    if missing or extra:
        raise StaleRelayError(
            "bench/services_relay.py SCRIPT is stale: the services' rounds write "
            f"{missing or 'nothing'} that the relay does not, and the relay writes "
            f"{extra or 'nothing'} that they do not: update SCRIPT before measuring"
        )


def pick_template(records: Iterable[Record]) -> Template:
    """One called round with a payout among the records: its records by type.
    KeyError if no round has every type the script publishes."""
    rounds: dict[str, Template] = {}
    for _, kind, value in records:
        body = json.loads(value)
        if body.get("round_id"):
            rounds.setdefault(body["round_id"], {})[kind] = (
                value,
                body["round_id"],
                body["player_id"],
            )
    wanted = {kind for _, outputs in SCRIPT.values() for kind in outputs}
    for found in rounds.values():
        if wanted <= found.keys():
            return found
    sample = [sorted(found) for found in list(rounds.values())[:3]]
    raise KeyError(f"no round with all of {sorted(wanted)}; {len(rounds)} rounds, e.g. {sample}")


def records_per_round(records: Iterable[Record]) -> dict[str, float]:
    """Service-published records per ended round, by type (deposits and rejections aside)."""
    kinds = Counter(kind for _, kind, _ in records)
    rounds = kinds["round.settled"] + kinds["round.voided"]
    published = {kind for _, outputs in SCRIPT.values() for kind in outputs}
    return {kind: kinds[kind] / max(rounds, 1) for kind in sorted(published)}


def hops_seen(per_round: dict[str, float]) -> int:
    """The script's hops whose records the services published in at least half the rounds."""
    return sum(any(per_round.get(k, 0) >= 0.5 for k in outs) for _, outs in SCRIPT.values())


def rewrite(template: tuple[bytes, str, str], round_id: str, player_id: str) -> bytes:
    value, old_round, old_player = template
    # the round id contains the player id: rewrite it first
    return value.replace(old_round.encode(), round_id.encode()).replace(
        old_player.encode(), player_id.encode()
    )


def answer(
    role: str, value: bytes, kind: str | None, template: Template, service: str
) -> list[tuple[str, str, bytes, str]]:
    """(topic role, type, value, key) of what ``service`` publishes for this record."""
    body: Any = None
    if kind is None:  # a command: its type is in its body
        body = json.loads(value)
        kind = body["type"]
    owner, outputs = SCRIPT.get(kind, ("", ()))
    if owner != service:
        return []
    body = body or json.loads(value)
    round_id, player_id = body["round_id"], body["player_id"]
    return [
        (
            ROLE_OF_TYPE[out.split(".")[0]],
            out,
            rewrite(template[out], round_id, player_id),
            player_id,
        )
        for out in outputs
    ]


async def work(
    service: str, connection: KafkaConnection, topics: Topics, template: Template
) -> None:
    """One relay worker: poll, answer, one transaction per batch with its offsets, forever."""
    group = f"{topics.prefix}.relay-{service}"
    reads = {getattr(topics, role): role for role in READS[service]}
    consumer = AIOKafkaConsumer(
        *reads,
        **connection.kwargs(),
        group_id=group,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
    )
    producer = AIOKafkaProducer(
        **connection.kwargs(),
        transactional_id=f"{group}-0",
        acks="all",
        linger_ms=0,
        max_batch_size=PRODUCE_BATCH_BYTES,  # as the services' producer
    )
    await producer.start()
    await consumer.start()
    print("relay ready", flush=True)
    while True:
        batch = await consumer.getmany(timeout_ms=1000, max_records=MAX_BATCH)
        if not batch:
            continue
        offsets: dict[TopicPartition, int] = {}
        async with producer.transaction():
            for tp, records in batch.items():
                for record in records:
                    kind = dict(record.headers).get("type")
                    out = answer(
                        reads[tp.topic], record.value, kind and kind.decode(), template, service
                    )
                    for role, out_kind, value, key in out:
                        headers = [("type", out_kind.encode())]
                        await producer.send(
                            getattr(topics, role), value, key=key.encode(), headers=headers
                        )
                offsets[tp] = records[-1].offset + 1
            await producer.send_offsets_to_transaction(offsets, group)


class Relay:
    """The three relay workers as processes, as the launcher runs the services."""

    def __init__(
        self, connection: KafkaConnection, topics: Topics, template: Template, log_dir: Path
    ):
        self.args = (connection, topics, template, log_dir)
        self.processes: list[asyncio.subprocess.Process] = []

    async def __aenter__(self) -> Relay:
        connection, topics, template, log_dir = self.args
        spec = log_dir / "relay-template.json"
        spec.write_text(json.dumps({k: [v.decode(), r, p] for k, (v, r, p) in template.items()}))
        env = {**os.environ, **connection.env(), "RELAY_PREFIX": topics.prefix}
        for service in READS:
            argv = [sys.executable, __file__, service, str(spec)]
            with (log_dir / f"relay-{service}.log").open("wb") as log:  # the child keeps its copy
                process = await asyncio.create_subprocess_exec(
                    *argv, env=env, stdout=log, stderr=asyncio.subprocess.STDOUT
                )
            self.processes.append(process)
        for service in READS:
            await self._ready(log_dir / f"relay-{service}.log")
        return self

    async def _ready(self, log: Path) -> None:
        for _ in range(600):
            text = await asyncio.to_thread(log.read_bytes)
            if b"relay ready" in text:
                return
            if any(p.returncode is not None for p in self.processes):
                raise RuntimeError(f"a relay worker exited:\n{text[-2000:].decode()}")
            await asyncio.sleep(0.1)
        raise RuntimeError(f"relay worker not ready in 60 s: {log}")

    async def __aexit__(self, *exc: object) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            await asyncio.wait_for(process.wait(), 15)

    @property
    def pids(self) -> list[int | None]:
        return [process.pid for process in self.processes]


def _main(service: str, spec: str) -> None:
    template = {
        k: (v.encode(), r, p) for k, (v, r, p) in json.loads(Path(spec).read_text()).items()
    }
    topics = Topics().with_prefix(os.environ["RELAY_PREFIX"])
    asyncio.run(work(service, KafkaConnection.from_env(), topics, template))


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])
