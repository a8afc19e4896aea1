"""The container health check: ready only when every holdem_ready sample of the port is 1."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, start_http_server

from holdem.runtime.health import main, ready
from holdem.runtime.metrics import Metrics


@pytest.fixture
def served() -> Iterator[tuple[int, Metrics]]:
    """A service's metric families on a free loopback port."""
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    try:
        yield port, metrics
    finally:
        server.shutdown()
        thread.join(5)


def test_ready_wants_a_sample_and_every_sample_at_one() -> None:
    assert not ready("")
    assert not ready('holdem_ready{service="dealer"} 0.0\n')
    assert ready('holdem_ready{service="dealer"} 1.0\n')
    assert not ready('holdem_ready{service="a"} 1.0\nholdem_ready{service="b"} 0.0\n')


def test_the_check_follows_the_loop_as_each_scrape_reads_it(served: tuple[int, Metrics]) -> None:
    port, metrics = served
    state = {"healthy": False}
    metrics.ready.labels("wallet").set_function(lambda: float(state["healthy"]))
    assert main(["--port", str(port)]) == 1
    state["healthy"] = True
    assert main(["--port", str(port)]) == 0
    state["healthy"] = False
    assert main(["--port", str(port)]) == 1


def test_no_port_or_no_server_is_unhealthy(served: tuple[int, Metrics]) -> None:
    port, _ = served
    assert main(["--port", "0"]) == 1
    assert main(["--port", str(port)]) == 1  # served, but no holdem_ready sample yet
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    assert main(["--port", str(closed)]) == 1


def test_another_readiness_gauge_is_read_only_when_named() -> None:
    """The live auditor's container checks holdem_audit_ready; the services' gauge name is the
    default, and neither gauge stands in for the other."""
    auditor = "holdem_audit_ready 1.0\n"
    assert ready(auditor, "holdem_audit_ready")
    assert not ready(auditor)
    assert not ready('holdem_ready{service="dealer"} 1.0\n', "holdem_audit_ready")
    assert not ready("holdem_audit_ready 0.0\n", "holdem_audit_ready")
