"""Sampling a running soak: each process's memory, the groups' lag, topic sizes, error lines."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from holdem.client import KafkaConnection
from holdem.core.wire.connection import start_or_close
from holdem.core.wire.topics import Topics
from holdem.harness.chaos_auditor import LiveAuditor, scrape
from holdem.harness.soak.config import ERROR_LINE, NAMES, PARTITIONS, RETRY_LINE, Config, Samples
from holdem.ops.broker import LocalBroker
from holdem.ops.launcher import Launcher


def rss_mb(pid: int | None) -> float | None:
    """A process's resident set (VmRSS), MB; None once it is gone."""
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) / 1024 if found else None


def topic_sizes(data_dir: Path, prefix: str) -> dict[str, float]:
    """MB on disk per topic of the run (its partitions' directories summed)."""
    sizes: dict[str, float] = {}
    for part in data_dir.glob(f"{prefix}.*-*"):
        topic = part.name.rsplit("-", 1)[0].removeprefix(f"{prefix}.holdem.")
        # Blocks in use, not the apparent size: a segment's indexes are preallocated sparse files.
        total = sum(f.stat().st_blocks * 512 for f in part.iterdir() if f.is_file())
        sizes[topic] = sizes.get(topic, 0.0) + total / 2**20
    return sizes


async def group_lags(admin: KafkaConnection, prefix: str, topics: Topics) -> dict[str, int]:
    """Per service: records of its input topics not yet committed by its group."""
    inputs = {
        "dealer": [topics.commands, topics.rounds],
        "wallet": [topics.commands, topics.rounds],
        "settlement": [topics.rounds],
    }
    client = AIOKafkaAdminClient(**admin.kwargs())
    ends_reader = AIOKafkaConsumer(
        **admin.kwargs(), group_id=None, isolation_level="read_committed"
    )
    await client.start()
    try:
        await start_or_close(ends_reader)
    except BaseException:
        await client.close()
        raise
    try:
        lags: dict[str, int] = {}
        for name, names in inputs.items():
            tps = [TopicPartition(t, p) for t in names for p in range(PARTITIONS)]
            committed = await client.list_consumer_group_offsets(
                f"{prefix}.holdem-{name}", partitions=tps
            )
            ends = await ends_reader.end_offsets(tps)
            lags[name] = sum(
                max(0, ends[tp] - (committed[tp].offset if tp in committed else 0)) for tp in tps
            )
        return lags
    finally:
        await ends_reader.stop()
        await client.close()


class Sampler:
    """Every sample_s: memory, lag, topic sizes, new error lines."""

    def __init__(
        self,
        config: Config,
        samples: Samples,
        launcher: Launcher,
        broker: LocalBroker,
        admin: KafkaConnection,
        topics: Topics,
        auditor: LiveAuditor,
    ) -> None:
        self.config, self.samples, self.launcher = config, samples, launcher
        self.broker, self.admin, self.topics = broker, admin, topics
        self.auditor = auditor
        self.read_to: dict[str, int] = {}
        self.began = time.monotonic()

    def auditor_pid(self) -> int | None:
        return self.auditor.process.pid if self.auditor.process.alive else None

    def broker_pid(self) -> int | None:
        try:
            return int((self.broker.run_dir / "pid").read_text().strip())
        except (OSError, ValueError):
            return None

    async def once(self) -> None:
        at = time.monotonic() - self.began
        running = {label: self.launcher.services[label] for label in NAMES}
        pids = {label: s.pid for label, s in running.items()}
        pids |= {"broker": self.broker_pid(), "load": os.getpid(), "auditor": self.auditor_pid()}
        for label, pid in pids.items():
            mb = rss_mb(pid)
            if mb is not None:
                self.samples.rss_mb.setdefault(label, []).append((at, round(mb, 1)))
        prefix = self.topics.prefix
        for name, lag in (await group_lags(self.admin, prefix, self.topics)).items():
            self.samples.lag.setdefault(name, []).append((at, lag))
        for topic, mb in topic_sizes(self.broker.run_dir / "data", prefix).items():
            self.samples.topic_mb.setdefault(topic, []).append((at, round(mb, 2)))
        metrics = await asyncio.to_thread(scrape, self.auditor.port)
        if "holdem_audit_lag_records" in metrics:
            self.samples.lag.setdefault("auditor", []).append(
                (at, int(metrics["holdem_audit_lag_records"]))
            )
            self.samples.auditor_lag_s.append((at, metrics["holdem_audit_lag_seconds"]))
        for label, service in [*running.items(), ("auditor", self.auditor.process)]:
            with service.log_path.open("rb") as log:
                log.seek(self.read_to.get(label, 0))
                text = log.read()
                self.read_to[label] = log.tell()
            for line in text.decode(errors="replace").splitlines():
                if ERROR_LINE.search(line):
                    self.samples.errors.append(f"{label} at {at:.0f}s: {line[:400]}")
                elif RETRY_LINE.search(line):
                    retries = self.samples.produce_retries
                    retries[label] = retries.get(label, 0) + 1

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.once()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.config.sample_s):
                    await stop.wait()
        await self.once()
