"""`make chaos`: the live auditor (``holdem-auditor``) beside the services for a whole phase.

It runs as the ``auditor`` principal on the phase's topics, with a checkpoint directory in the
phase's logs (ADR 044), through everything the phase does: broker kill -9s and outages (it rides
them out, or exits 70 and is started again, as the services are by the supervisor), a kill -9
of its own among the phase's actions (it resumes from its last checkpoint). At the end of the
phase it must be at the log's end (ready, lag 0 records and 0 s, no round held) with no finding
on its findings topic; the phase prints its lag, findings, restarts and what its last start
folded."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness import audit_checkpoint
from holdem.harness.audit import AuditReport
from holdem.harness.audit_checkpoint import CheckpointError
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_read import read_topic
from holdem.harness.auditor_service import (
    CHECKPOINT_ENV,
    CHECKPOINT_NAME,
    auditor_roles,
    checkpoint_options,
)
from holdem.ops.acl import findings_topic
from holdem.ops.launcher import ServiceProcess

GRACE_S = 3.0  # the auditor's --grace-s: a quiet log's rounds judged soon after the load
CHECKPOINT_S = 5.0  # its --checkpoint-s: a kill -9 loses at most this much of its work
RESTART_S = 3.0  # at most one start per this (a broker away: each start exits 70 at once)
SUPERVISE_S = 0.5
CAUGHT_UP_S = 240.0  # bound on the wait for it at the log's end after the load


def _loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scrape(port: int) -> dict[str, float]:
    """Every sample of the auditor's /metrics, by name and labels (empty if it does not answer):
    ``holdem_audit_ready``, ``holdem_audit_violations_total{invariant=round}``."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return {}
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            samples[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return samples


def at_the_end(samples: dict[str, float]) -> bool:
    return (
        samples.get("holdem_audit_ready") == 1
        and samples.get("holdem_audit_lag_records") == 0
        and samples.get("holdem_audit_lag_seconds") == 0
        and samples.get("holdem_audit_rounds_held") == 0
    )


@dataclass
class LiveAuditor:
    """One phase's live auditor process, kept running (``supervise``) until ``finish``."""

    process: ServiceProcess
    port: int
    checkpoint_dir: Path
    exits: Counter[str] = field(default_factory=Counter)  # unasked exits by status
    kills: int = 0
    stopping: bool = False

    @classmethod
    def of(
        cls,
        connection: KafkaConnection,
        topics: Topics,
        log_dir: Path,
        checkpoint_s: float = CHECKPOINT_S,
    ) -> LiveAuditor:
        """``checkpoint_s``: chaos's short interval by default (a kill -9 loses little); a
        steady run passes the service's own (writing the fold costs about a second)."""
        port = _loopback_port()
        checkpoint_dir = log_dir / "auditor-checkpoint"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")},
            **connection.env(),
            "HOLDEM_TOPIC_PREFIX": topics.prefix,
            "HOLDEM_METRICS_HOST": "127.0.0.1",
            "HOLDEM_METRICS_PORT": str(port),
            CHECKPOINT_ENV: str(checkpoint_dir),
            "PYTHONUNBUFFERED": "1",
        }
        argv = [sys.executable, "-m", "holdem.harness.auditor_service"]
        argv += ["--grace-s", str(GRACE_S), "--checkpoint-s", str(checkpoint_s)]
        process = ServiceProcess("auditor", env, log_dir / "auditor.log", argv=argv)
        return cls(process, port, checkpoint_dir)

    async def supervise(self) -> None:
        """Start it, and again whenever it ends unasked (at most once per ``RESTART_S``)."""
        self.process.start()
        started = time.monotonic()
        while not self.stopping:
            await asyncio.sleep(SUPERVISE_S)
            if self.process.alive or self.stopping:
                continue
            self.exits[str(self.process.exit_code)] += 1
            await asyncio.sleep(max(0.0, RESTART_S - (time.monotonic() - started)))
            if not self.stopping:
                self.process.start()
                started = time.monotonic()

    async def kill(self) -> None:
        """kill -9 (a phase's action): ``supervise`` starts it again, from its checkpoint."""
        if self.process.alive:
            await asyncio.to_thread(self.process.kill)
            self.kills += 1

    async def finish(self, admin: KafkaConnection, topics: Topics) -> tuple[str, list[str]]:
        """Wait for it at the log's end, stop it; the line it prints and its violations."""
        began = time.monotonic()
        samples: dict[str, float] = {}
        while time.monotonic() - began < CAUGHT_UP_S:
            samples = await asyncio.to_thread(scrape, self.port)
            if at_the_end(samples):
                break
            await asyncio.sleep(0.5)
        waited = time.monotonic() - began
        self.stopping = True
        code = await self.process.stop()
        found = [
            json.loads(r.value)["finding"]
            for r in await read_topic(admin, findings_topic(topics))
            if r.value is not None
        ]
        resumed = _events(self.process.log_since_start(), "checkpoint_loaded")
        refused = _events(self.process.log_path.read_text(errors="replace"), "checkpoint_refused")
        violations = [f"live auditor: {finding}" for finding in found]
        if not at_the_end(samples):
            violations.append(
                f"live auditor: not at the log's end {CAUGHT_UP_S:.0f}s after the load: "
                f"{ {k: v for k, v in samples.items() if '{' not in k} }"
            )
        if code != 0:
            violations.append(f"live auditor: exit {code} when stopped")
        violations += [f"live auditor: checkpoint refused: {line.get('error')}" for line in refused]
        line = (
            f"live auditor: at the log's end {waited:.1f}s after the load, lag "
            f"{samples.get('holdem_audit_lag_records', float('nan')):.0f} records "
            f"{samples.get('holdem_audit_lag_seconds', float('nan')):.1f}s, findings "
            f"{len(found)}; kill -9 {self.kills}, unasked exits {dict(self.exits)}, starts "
            f"{self.process.starts}; its last start folded "
            f"{samples.get('holdem_audit_records_total', float('nan')):.0f} records"
            + (f" after its checkpoint's {resumed[-1].get('records')}" if resumed else "")
        )
        return line, violations

    def final_report(self, topics: Topics) -> AuditReport:
        """The verdict of its fold over the whole log (across its restarts), read from the
        checkpoint it wrote when ``finish`` stopped it: the counts and what it found.
        ``CheckpointError`` if there is none or it is refused."""
        fold = AuditFold(operator=operator_of_prefix(topics.prefix))
        options = checkpoint_options(topics, auditor_roles(), fold)
        checkpoint = audit_checkpoint.load(self.checkpoint_dir, options, CHECKPOINT_NAME)
        if checkpoint is None or checkpoint.fold is None:
            raise CheckpointError(f"the live auditor left no checkpoint in {self.checkpoint_dir}")
        return checkpoint.fold.report()


def _events(text: str, name: str) -> list[dict[str, object]]:
    """The JSON log lines of event ``name`` in ``text``."""
    out = []
    for raw in text.splitlines():
        if raw.startswith("{"):
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict) and line.get("event") == name:
                out.append(line)
    return out
