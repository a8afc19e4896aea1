"""Shopify's toxiproxy for the network-fault tests, from deploy/toxiproxy/provision.sh: a TCP
proxy on loopback whose connections a test slows down (``latency``), stalls (``timeout``) or
resets (``reset_peer``) through its HTTP API (https://github.com/Shopify/toxiproxy#toxics),
spoken here with the standard library."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.provisioned import die_with_parent, provisioned, stop, tail

REPO = Path(__file__).resolve().parents[2]
PROVISION = REPO / "deploy" / "toxiproxy" / "provision.sh"
PROVISION_TIMEOUT_S = 600  # a cold module cache downloads toxiproxy's modules first
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def binary() -> Path:
    """deploy/toxiproxy/.cache/<version>/server, built on first use; a failure, never a skip,
    when it cannot be had (no Go toolchain, no module proxy)."""
    return provisioned(PROVISION, PROVISION_TIMEOUT_S, "toxiproxy")


@dataclass
class Toxiproxy:
    """A ``toxiproxy-server`` on 127.0.0.1:``port`` (its API), logging to ``workdir``."""

    workdir: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    proxies: dict[str, str] = field(default_factory=dict)  # name -> listen address

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        with (self.workdir / "toxiproxy.log").open("ab") as log:
            self.process = subprocess.Popen(
                [str(binary()), "-host", "127.0.0.1", "-port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=die_with_parent,
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self._answers():
            if self.process.poll() is not None:
                raise AssertionError(f"toxiproxy exited {self.process.returncode}: {self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"toxiproxy not answering in {READY_TIMEOUT_S}s: {self.log()}")
            time.sleep(0.1)

    def _answers(self) -> bool:
        with contextlib.suppress(OSError):
            return bool(self._call("GET", "/version"))
        return False

    def stop(self) -> int | None:
        return stop(self.process, STOP_TIMEOUT_S)

    def log(self, lines: int = 20) -> str:
        return tail(self.workdir / "toxiproxy.log", lines)

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                text = answer.read().decode()
        except urllib.error.HTTPError as error:
            detail = error.read()
            raise AssertionError(f"toxiproxy {method} {path}: {error.code} {detail!r}") from None
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def proxy(self, name: str, listen: str, upstream: str) -> dict[str, Any]:
        """A proxy listening on ``listen`` (host:port) that forwards to ``upstream``."""
        created: dict[str, Any] = self._call(
            "POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream}
        )
        self.proxies[name] = created["listen"]
        return created

    def add(
        self, proxy: str, toxic: str, kind: str, stream: str = "downstream", **attributes: int
    ) -> None:
        """Toxic ``toxic`` of type ``kind`` on every connection of ``proxy`` (the ones open and
        the ones to come), in one direction: downstream is broker to client."""
        body = {"name": toxic, "type": kind, "stream": stream, "toxicity": 1.0}
        self._call("POST", f"/proxies/{proxy}/toxics", body | {"attributes": attributes})

    def remove(self, proxy: str, toxic: str) -> None:
        self._call("DELETE", f"/proxies/{proxy}/toxics/{toxic}")

    def toxics(self, proxy: str) -> list[str]:
        found: list[dict[str, Any]] = self._call("GET", f"/proxies/{proxy}/toxics")
        return [t["name"] for t in found]


@contextlib.contextmanager
def toxiproxy(workdir: Path, port: int) -> Iterator[Toxiproxy]:
    """A started toxiproxy with its API on ``port``, stopped at the end."""
    server = Toxiproxy(workdir, port)
    try:
        server.start()
        yield server
    finally:
        server.stop()
