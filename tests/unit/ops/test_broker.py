"""LocalBroker drives kafka.sh: a cluster's up names its nodes; one node is killed or started."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from holdem.ops.broker import LaunchError, LocalBroker

# A stand-in for kafka.sh: records its arguments, prints a bootstrap list, fails on "start-node 3".
FAKE = """#!/usr/bin/env bash
echo "$*" >>"$(dirname "$0")/calls"
[[ "$1 $2" == "start-node 3" ]] && { echo "node 3 did not start" >&2; exit 1; }
echo 127.0.0.1:1,127.0.0.1:2,127.0.0.1:3
"""


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "kafka.sh"
    script.write_text(FAKE)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("HOLDEM_KAFKA_SH", str(script))
    return tmp_path / "calls"


def test_a_cluster_is_brought_up_with_its_node_count_and_its_nodes_one_at_a_time(
    calls: Path, tmp_path: Path
) -> None:
    broker = LocalBroker(tmp_path / "run", nodes=3, watch=False)
    broker.authorize = lambda prefix: None  # type: ignore[method-assign]  # no ACLs to apply
    assert broker.up() == "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"
    broker.kill_node(2)
    broker.start_node(2)
    broker.stop_node(1)
    run = tmp_path / "run"
    assert calls.read_text().splitlines() == [
        f"up --dir {run} --wipe --nodes 3",
        f"kill-node 2 --dir {run}",
        f"start-node 2 --dir {run}",
        f"stop-node 1 --dir {run}",
    ]


def test_a_node_that_does_not_start_is_a_launch_error(calls: Path, tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="node 3 did not start"):
        LocalBroker(tmp_path, nodes=3).start_node(3)


def test_a_node_outside_the_cluster_is_refused_before_kafka_sh_runs(
    calls: Path, tmp_path: Path
) -> None:
    for node in (0, 4):
        with pytest.raises(ValueError, match=f"no node {node}"):
            LocalBroker(tmp_path, nodes=3).kill_node(node)
    with pytest.raises(ValueError, match="no node 1"):
        LocalBroker(tmp_path).kill_node(1)  # a single broker has no node to kill alone
    assert not calls.exists()


def test_a_proxied_port_is_passed_to_kafka_sh_and_its_listener_read_from_the_run_dir(
    calls: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    broker = LocalBroker(run, proxied_port=45001, watch=False)
    broker.authorize = lambda prefix: None  # type: ignore[method-assign]  # no ACLs to apply
    with pytest.raises(LaunchError, match="no proxied listener"):
        broker.proxied_listener  # noqa: B018  # the property reads the file kafka.sh writes
    broker.up()
    assert calls.read_text().splitlines() == [f"up --dir {run} --wipe --proxied-port 45001"]
    run.mkdir()
    (run / "proxied").write_text("45002 45001\n")  # what kafka.sh writes: "Q R"
    assert broker.proxied_listener == "127.0.0.1:45002"
    with pytest.raises(ValueError, match="one node"):
        LocalBroker(run, nodes=3, proxied_port=45001)


def test_a_cluster_is_not_tls_and_has_at_least_one_node() -> None:
    with pytest.raises(ValueError, match="TLS"):
        LocalBroker(Path(os.devnull), nodes=3, tls=True)
    with pytest.raises(ValueError):
        LocalBroker(Path(os.devnull), nodes=0)


def test_kill_sigkills_the_run_dirs_broker_and_nothing_else(tmp_path: Path) -> None:
    # Stand-ins whose command lines look like a broker of this dir and like someone else's.
    ours = f"kafka.Kafka {tmp_path / 'server.properties'}"
    sleeper = "import time; time.sleep(60)"
    other = subprocess.Popen([sys.executable, "-c", sleeper, "kafka.Kafka", "/elsewhere"])
    broker = subprocess.Popen([sys.executable, "-c", sleeper, *ours.split()])
    for process in (other, broker):  # until each has exec'd: its command line is its own
        while b"kafka.Kafka" not in Path(f"/proc/{process.pid}/cmdline").read_bytes():
            time.sleep(0.01)
    try:
        (tmp_path / "pid").write_text(str(other.pid))
        assert not LocalBroker(tmp_path).running()
        with pytest.raises(LaunchError, match="not its broker"):
            LocalBroker(tmp_path).kill()
        assert other.poll() is None

        (tmp_path / "pid").write_text(str(broker.pid))
        assert LocalBroker(tmp_path).running()
        assert LocalBroker(tmp_path).kill() == broker.pid
        assert broker.wait(timeout=10) == -signal.SIGKILL
        assert not LocalBroker(tmp_path).running()
    finally:
        other.kill()
        broker.kill()
        other.wait()
        broker.wait()


def test_a_cluster_is_killed_a_node_at_a_time() -> None:
    with pytest.raises(ValueError, match="kill_node"):
        LocalBroker(Path("/nonexistent"), nodes=3).kill()
