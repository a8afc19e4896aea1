"""Run the local broker and the four services as separate OS processes (demo, chaos tests)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ctypes
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from holdem.core.wire.connection import PREFIX, KafkaConnection
from holdem.ops.broker import (  # re-exported: the launcher's users import them from here
    LaunchError,
    LocalBroker,
    kafka_script,
    principals_from_env,
    read_principals,
)

__all__ = [
    "LaunchError",
    "Launcher",
    "LocalBroker",
    "ServiceProcess",
    "kafka_script",
    "principals_from_env",
    "read_principals",
]

SERVICES: tuple[str, ...] = ("wallet", "dealer", "settlement", "query")
METRICS_PORTS: Mapping[str, int] = {
    "dealer": 9101, "wallet": 9102, "settlement": 9103, "query": 9104
}  # fmt: skip
# The runtime logs this structlog event once it has rebuilt the state of its assigned partitions;
# from then on it handles records, so it is the moment a service is ready.
READY_EVENT = "replayed"
READY_TIMEOUT_S = 90.0  # a restart waits out the dead member's session (10 s) before the replay
STOP_TIMEOUT_S = 15.0
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the launcher dies, so none is orphaned."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _replay_record(line: str) -> dict[str, Any] | None:
    """The runtime's "replayed" log record on this line, if it is one."""
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and record.get("event") == READY_EVENT else None


@dataclass
class ServiceProcess:
    """One service instance as an OS process: ``python -c 'holdem.<name>.app.main()'``, logs
    to a file. ``label`` names the instance (``wallet``, ``wallet-1``, ...)."""

    name: str
    env: dict[str, str]
    log_path: Path
    argv: list[str] = field(default_factory=list)  # empty: the service's own main()
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0
    label: str = ""
    retired: bool = False  # stopped for good (scaled in): a supervisor does not restart it
    _log_offset: int = 0

    def __post_init__(self) -> None:
        self.label = self.label or self.name

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Spawn the process; its stdout and stderr are appended to ``log_path``."""
        if self.alive:
            raise LaunchError(f"{self.name} is already running (pid {self.pid})")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self._log_offset = log.tell()
            marker = f"--- launcher: start #{self.starts + 1} of {self.name} at {time.time():.3f}\n"
            log.write(marker.encode())
            log.flush()
            self.process = subprocess.Popen(
                self.argv
                or [sys.executable, "-c", f"from holdem.{self.name}.app import main; main()"],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the launcher, which stops them in order
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        self.starts += 1

    async def wait_ready(self, within_s: float = READY_TIMEOUT_S) -> float:
        """Seconds until the log since this start says the state is replayed; LaunchError if
        the process dies or ``within_s`` passes first."""
        started = time.monotonic()
        while True:
            if self._ready_in_log():
                return time.monotonic() - started
            if not self.alive:
                raise LaunchError(f"{self.name} exited ({self._exit_code()}):\n{self.log_tail()}")
            if time.monotonic() - started > within_s:
                raise LaunchError(f"{self.name} not ready in {within_s:.0f}s:\n{self.log_tail()}")
            await asyncio.sleep(0.1)

    def _ready_in_log(self) -> bool:
        return bool(self.replays())

    def replays(self) -> list[dict[str, Any]]:
        """The "replayed" records logged since the last start: partitions, events, seconds."""
        text = self.log_since_start()
        return [r for r in map(_replay_record, text.splitlines()) if r is not None]

    def log_since_start(self) -> str:
        """What the process logged since its last start."""
        with self.log_path.open("rb") as log:
            log.seek(self._log_offset)
            return log.read().decode("utf-8", errors="replace")

    def _exit_code(self) -> int | None:
        return self.process.poll() if self.process is not None else None

    def kill(self) -> None:
        """SIGKILL, no goodbye: what a crash looks like to Kafka and to the other services."""
        if self.process is None or not self.alive:
            return
        self.process.kill()
        self.process.wait(timeout=STOP_TIMEOUT_S)
        self.kills += 1

    async def stop(self, grace_s: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM (the app's graceful shutdown), SIGKILL if it is still running after
        ``grace_s``; returns the exit code."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            process.terminate()
            try:
                await asyncio.to_thread(process.wait, grace_s)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait, STOP_TIMEOUT_S)
        return process.returncode

    @property
    def exit_code(self) -> int | None:
        """The exit status once the process has ended (negative: killed by that signal)."""
        return self._exit_code()

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            return f"(no log: {error})"
        return "\n".join(text.splitlines()[-lines:])


def _new_vault_key() -> str:
    return "launch:" + base64.b64encode(secrets.token_bytes(32)).decode()


def label_of(name: str, instance: int) -> str:
    """``wallet`` for instance 0 (the one-instance launcher's name), ``wallet-1`` and on after."""
    return name if instance == 0 else f"{name}-{instance}"


@dataclass
class Launcher:
    """The four services against one broker and topic prefix, ``instances`` processes each
    (distinct HOLDEM_INSTANCE_ID; metrics only on instance 0); start, crash, restart, stop,
    and scale out (``add``) or in (``retire``) during a run. ``services`` is keyed by label."""

    bootstrap: str
    log_dir: Path
    prefix: str = ""
    partitions: int = 3
    metrics_ports: Mapping[str, int] = field(default_factory=dict)  # missing name = off (0)
    extra_env: Mapping[str, str] = field(default_factory=dict)
    # Each service's principal (LocalBroker.principals()); a missing one inherits HOLDEM_KAFKA_*.
    credentials: Mapping[str, KafkaConnection] = field(default_factory=dict)
    # The dealer's vault key ring: the environment's, else one made for this launcher (the same
    # across its restarts, so a restarted dealer opens the decks it sealed).
    vault_keys: str = field(
        default_factory=lambda: os.environ.get("HOLDEM_DEALER_VAULT_KEYS") or _new_vault_key()
    )
    instances: int = 1
    services: dict[str, ServiceProcess] = field(init=False, default_factory=dict)
    _next_id: dict[str, int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for name in SERVICES:
            for _ in range(self.instances):
                self._new_instance(name)

    def _new_instance(self, name: str) -> ServiceProcess:
        """A new instance of ``name`` with the next unused instance id (ids are never reused:
        a reused id would wait out its predecessor's session, ADR 012)."""
        instance = self._next_id.get(name, 0)
        self._next_id[name] = instance + 1
        label = label_of(name, instance)
        service = ServiceProcess(
            name, self.env_for(name, instance), self.log_dir / f"{label}.log", label=label
        )
        self.services[label] = service
        return service

    def instances_of(self, name: str, *, live: bool = False) -> list[ServiceProcess]:
        """The instances of service ``name`` not retired (``live``: and running now)."""
        return [
            s
            for s in self.services.values()
            if s.name == name and not s.retired and (s.alive or not live)
        ]

    async def add(self, name: str, within_s: float = READY_TIMEOUT_S) -> tuple[str, float]:
        """Start one more instance of ``name`` (scale out); its label and seconds to ready."""
        service = self._new_instance(name)
        service.start()
        return service.label, await service.wait_ready(within_s)

    async def retire(self, label: str, grace_s: float = STOP_TIMEOUT_S) -> int | None:
        """Stop instance ``label`` gracefully (SIGTERM: it leaves the group, its partitions move
        at once) and for good; its exit code."""
        service = self.services[label]
        service.retired = True
        return await service.stop(grace_s)

    def env_for(self, name: str, instance: int = 0) -> dict[str, str]:
        """The process environment: this one's, plus the HOLDEM_* settings of the service, which
        connects as its own principal when ``credentials`` has it."""
        inherited = dict(os.environ)
        kafka = {"HOLDEM_KAFKA_BOOTSTRAP": self.bootstrap}
        if name in self.credentials:
            inherited = {k: v for k, v in inherited.items() if not k.startswith(PREFIX)}
            kafka = self.credentials[name].env()
        return {
            **inherited,
            "PYTHONUNBUFFERED": "1",
            **kafka,
            "HOLDEM_TOPIC_PREFIX": self.prefix,
            "HOLDEM_PARTITIONS": str(self.partitions),
            # Stable per instance: a restarted instance reuses its transactional id and so fences
            # (aborts) whatever its killed predecessor left open.
            "HOLDEM_INSTANCE_ID": str(instance),
            "HOLDEM_METRICS_PORT": str(self.metrics_ports.get(name, 0) if instance == 0 else 0),
            # On this host only, as the compose stack publishes them (never every interface).
            "HOLDEM_METRICS_HOST": "127.0.0.1",
            "HOLDEM_DEALER_VAULT_KEYS": self.vault_keys,
            **self.extra_env,
        }

    async def start(
        self, names: Iterable[str] | None = None, within_s: float = READY_TIMEOUT_S
    ) -> None:
        """Start these instances (labels; default: all not retired) at once and wait until
        every one is ready."""
        labels = list(names) if names is not None else self._active()
        chosen = [self.services[label] for label in labels]
        for service in chosen:
            service.start()
        await asyncio.gather(*(service.wait_ready(within_s) for service in chosen))

    async def restart(
        self, name: str, down_s: float = 0.0, within_s: float = READY_TIMEOUT_S
    ) -> float:
        """kill -9 one instance (label), leave it dead ``down_s`` seconds, start it again, and
        return the seconds from the kill until it was ready again."""
        service = self.services[name]
        service.kill()
        started = time.monotonic()
        await asyncio.sleep(down_s)
        service.start()
        await service.wait_ready(within_s)
        return time.monotonic() - started

    async def stop(self, grace_s: float = STOP_TIMEOUT_S) -> dict[str, int | None]:
        """Stop every instance (SIGTERM, then SIGKILL after ``grace_s``); their exit codes."""
        names = list(self.services)
        codes = await asyncio.gather(*(self.services[n].stop(grace_s) for n in names))
        return dict(zip(names, codes, strict=True))

    def _active(self) -> list[str]:
        return [label for label, s in self.services.items() if not s.retired]

    async def __aenter__(self) -> Launcher:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


def free_port(port: int) -> bool:
    """True if ``port`` can be bound on all interfaces right now (metrics endpoints)."""
    with socket.socket() as probe:
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True
