"""promtool and a real Prometheus server for the tests, from deploy/prometheus/provision.sh."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from support.provisioned import die_with_parent, provisioned, stop, tail

REPO = Path(__file__).resolve().parents[2]
PROVISION = REPO / "deploy" / "prometheus" / "provision.sh"
PROVISION_TIMEOUT_S = 600  # a cold cache downloads Debian's package (~20 MB)
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0


def binary(name: str) -> Path:
    """deploy/prometheus/.cache/bin/<name> (``promtool`` or ``prometheus``), provisioned on
    first use; a failure, never a skip, when it cannot be had."""
    return provisioned(PROVISION, PROVISION_TIMEOUT_S, "promtool/prometheus") / name


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def rules_every(interval: str, source: Path, target: Path) -> Path:
    """``source``'s rule groups, unchanged but evaluated every ``interval`` (a group's own
    ``interval``, 1m for the RTP group, would outlast a short run)."""
    sheet = yaml.safe_load(source.read_text())
    for group in sheet["groups"]:
        group["interval"] = interval
    target.write_text(yaml.safe_dump(sheet, sort_keys=False))
    return target


@dataclass
class PrometheusServer:
    """``prometheus`` on 127.0.0.1 with a generated config: one job per service target."""

    workdir: Path
    targets: Mapping[str, str]  # job (service) -> host:port of its /metrics
    rule_files: tuple[Path, ...] = ()
    interval: str = "1s"
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> Path:
        scrape = [
            {
                "job_name": job,
                "static_configs": [{"targets": [target], "labels": {"service": job}}],
            }
            for job, target in self.targets.items()
        ]
        config = {
            "global": {"scrape_interval": self.interval, "evaluation_interval": self.interval},
            "rule_files": [str(path) for path in self.rule_files],
            "scrape_configs": scrape,
        }
        path = self.workdir / "prometheus.yml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    def start(self) -> None:
        self.port = self.port or free_loopback_port()
        config = self.config()
        log = (self.workdir / "prometheus.log").open("ab")
        command = [
            str(binary("prometheus")),
            f"--config.file={config}",
            f"--storage.tsdb.path={self.workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
        ]
        self.process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent
        )
        log.close()
        wait_until(self._ready, "Prometheus /-/ready", READY_TIMEOUT_S)

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"prometheus exited {self.process.returncode}:\n{self.log()}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer,
        ):
            return bool(answer.status == 200)
        return False

    def stop(self) -> int | None:
        return stop(self.process, STOP_TIMEOUT_S)

    def log(self, lines: int = 30) -> str:
        return tail(self.workdir / "prometheus.log", lines)

    def api(self, path: str, **params: str) -> Any:
        """The ``data`` of a /api/v1 answer (which must say success)."""
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, promql: str) -> list[tuple[dict[str, str], float]]:
        """An instant vector: (labels, value) per series; empty when nothing matches."""
        result = self.api("query", query=promql)["result"]
        return [(r["metric"], float(r["value"][1])) for r in result]

    def by(self, label: str, promql: str) -> dict[str, float]:
        """An instant vector keyed by one label's value."""
        return {labels[label]: value for labels, value in self.query(promql)}

    def scalar(self, promql: str) -> float | None:
        """The one value of ``promql`` (wrap it in sum() when needed); None when empty."""
        values = [value for _labels, value in self.query(promql)]
        assert len(values) <= 1, (promql, values)
        return values[0] if values else None


def wait_until(found: Callable[[], Any], what: str, timeout: float) -> Any:
    """Poll ``found()`` until truthy; AssertionError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (result := found()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)
    return result


async def eventually(found: Callable[[], Any], what: str, timeout: float) -> Any:
    """``wait_until`` off the event loop, so the test's Kafka clients keep running."""
    return await asyncio.to_thread(wait_until, found, what, timeout)


@contextlib.asynccontextmanager
async def prometheus_server(
    workdir: Path, targets: Mapping[str, str], rule_files: tuple[Path, ...], interval: str
) -> AsyncIterator[PrometheusServer]:
    """A started server on loopback, stopped at the end."""
    server = PrometheusServer(workdir, targets, rule_files, interval)
    try:
        await asyncio.to_thread(server.start)
        yield server
    finally:
        await asyncio.to_thread(server.stop)
