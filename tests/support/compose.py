"""The compose stack from a test: compose and docker at hand, the principals' connections on the
host, Prometheus's HTTP API (tests/containers/conftest.py starts it)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holdem.core.wire.connection import KafkaConnection

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "deploy" / "docker" / "engine.sh"
STACK = REPO / "deploy" / "docker" / "stack.sh"
PRINCIPALS = (
    "broker",
    "admin",
    "dealer",
    "wallet",
    "settlement",
    "query",
    "operator",
    "backoffice",
    "auditor",
)
SERVICES = ("dealer", "wallet", "settlement", "query")
PORTS = (
    "KAFKA",
    "PROMETHEUS",
    "DEALER_METRICS",
    "WALLET_METRICS",
    "SETTLEMENT_METRICS",
    "BACKOFFICE",
)
# The variables that move the host ports docker-compose.yml publishes (Grafana's, of its profile,
# aside): stack.sh checks each before it builds anything.
HOST_PORT_VARS = (
    "HOLDEM_KAFKA_PORT",
    "HOLDEM_PROMETHEUS_PORT",
    "HOLDEM_BACKOFFICE_PORT",
    "HOLDEM_DEALER_METRICS_PORT",
    "HOLDEM_WALLET_METRICS_PORT",
    "HOLDEM_SETTLEMENT_METRICS_PORT",
    "HOLDEM_QUERY_METRICS_PORT",
    "HOLDEM_AUDITOR_METRICS_PORT",
)
UP_TIMEOUT_S = 900  # builds on a cold engine (two shared cores) included


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on now (bound together so they differ)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def engine_answers(env: dict[str, str]) -> bool:
    return subprocess.run([str(ENGINE), "check"], env=env, capture_output=True).returncode == 0


@dataclass
class ComposeStack:
    """The running stack: its project, where it answers on the host, and compose at hand."""

    project: str
    env: dict[str, str]
    kafka_port: int
    prometheus_port: int
    passwords: dict[str, str]
    figures: dict[str, Any] = field(default_factory=dict)

    def connection(self, principal: str) -> KafkaConnection:
        return KafkaConnection(
            bootstrap=f"127.0.0.1:{self.kafka_port}",
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            username=principal,
            password=self.passwords[principal],
        )

    def client_env(self, principal: str) -> dict[str, str]:
        """HOLDEM_KAFKA_* as the operator guide (section 1) tells an operator to set them."""
        return {
            "HOLDEM_KAFKA_BOOTSTRAP": f"127.0.0.1:{self.kafka_port}",
            "HOLDEM_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
            "HOLDEM_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "HOLDEM_KAFKA_SASL_USERNAME": principal,
            "HOLDEM_KAFKA_SASL_PASSWORD": self.passwords[principal],
        }

    def compose(self, *args: str, timeout: float = 120) -> str:
        done = subprocess.run(
            ["docker", "compose", "-p", self.project, *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise AssertionError(f"docker compose {' '.join(args)}: {done.stderr[-3000:]}")
        return done.stdout

    def docker(self, *args: str) -> str:
        done = subprocess.run(
            ["docker", *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        if done.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)}: {done.stderr[-2000:]}")
        return done.stdout.strip()

    def docker_result(self, *args: str) -> int:
        """``docker args``'s exit status (its output dropped)."""
        return subprocess.run(
            ["docker", *args], env=self.env, capture_output=True, timeout=60
        ).returncode

    def container(self, service: str) -> str:
        return self.compose("ps", "-q", service).strip()

    def state(self, service: str) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(
            self.docker("inspect", "--format", "{{json .State}}", self.container(service))
        )
        return state

    def restarts(self, service: str) -> int:
        return int(self.docker("inspect", "--format", "{{.RestartCount}}", self.container(service)))

    def wait_healthy(self, service: str, within_s: float = 180) -> float:
        """Seconds until the service's container reports healthy (AssertionError past the bound)."""
        started = time.monotonic()
        while time.monotonic() - started < within_s:
            health = (self.state(service).get("Health") or {}).get("Status")
            if health == "healthy":
                return time.monotonic() - started
            time.sleep(0.25)
        raise AssertionError(f"{service} not healthy within {within_s:.0f}s:\n{self.logs(service)}")

    def logs(self, service: str, tail: int = 40) -> str:
        return self.compose("logs", "--no-color", "--tail", str(tail), service)

    def prometheus(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        url = f"http://127.0.0.1:{self.prometheus_port}{path}{query}"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]


def wait_for(what: str, check: Any, within_s: float = 90) -> Any:
    """``check()``'s first truthy value, polled each second (AssertionError past the bound)."""
    deadline = time.monotonic() + within_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {within_s:.0f}s")
        time.sleep(1)


def health(stack: ComposeStack, container: str) -> bool:
    """True when the container (an id or name) reports healthy."""
    status = stack.docker("inspect", "--format", "{{.State.Health.Status}}", container)
    return bool(status == "healthy")


def took_all(stack: ComposeStack, container: str) -> dict[str, Any] | None:
    """The container's last "replayed" line if it rebuilt all three partitions after its first
    one (the services log to stderr and stdout: both are read)."""
    done = subprocess.run(
        ["docker", "logs", container], env=stack.env, capture_output=True, text=True, timeout=60
    )
    replays = [
        json.loads(line)
        for line in (done.stdout + done.stderr).splitlines()
        if line.startswith("{") and '"replayed"' in line
    ]
    if len(replays) >= 2 and replays[-1].get("partitions") == [0, 1, 2]:
        return dict(replays[-1])
    return None


def second_instance(stack: ComposeStack, service: str) -> str:
    """A second instance of ``service`` in its group (instance id 1), healthy: its container."""
    second = stack.compose(
        "run", "--detach", "--no-deps", "-e", "HOLDEM_INSTANCE_ID=1", service
    ).strip().splitlines()[-1]  # fmt: skip
    try:
        wait_for(f"the second {service} instance healthy", lambda: health(stack, second), 300)
    except BaseException:
        stack.docker("rm", "--force", second)
        raise
    return second
