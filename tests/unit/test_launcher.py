"""The launcher with stand-in processes: ready on the runtime's log line, kill -9, stop, failure."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from holdem.core.wire.connection import KafkaConnection
from holdem.ops.launcher import READY_EVENT, SERVICES, Launcher, LaunchError, ServiceProcess
from holdem.runtime import rebuild


def fake(tmp_path: Path, script: str) -> ServiceProcess:
    argv = [sys.executable, "-c", script]
    return ServiceProcess("fake", dict(os.environ), tmp_path / "fake.log", argv=argv)


READY = json.dumps({"event": READY_EVENT, "partitions": [0, 1, 2], "service": "fake"})
SERVES = f"import sys, time; print('starting'); print({READY!r}, file=sys.stderr); time.sleep(60)"


def test_the_ready_event_is_the_one_the_runtime_logs_after_its_replay() -> None:
    source = Path(rebuild.__file__).read_text()

    assert re.search(rf'log\.info\(\s*"{READY_EVENT}"', source)


async def test_a_service_is_ready_once_its_log_says_replayed_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    service = fake(tmp_path, SERVES)
    service.start()

    await service.wait_ready(within_s=20)
    code = await service.stop(grace_s=5)

    assert code == -signal.SIGTERM and not service.alive
    assert "starting" in service.log_path.read_text()


async def test_a_restart_waits_for_a_new_ready_line_not_the_old_one(tmp_path: Path) -> None:
    service = fake(tmp_path, SERVES)
    service.start()
    await service.wait_ready(within_s=20)

    service.kill()
    service.argv = [sys.executable, "-c", "import time; time.sleep(60)"]  # never ready again
    service.start()

    with pytest.raises(LaunchError, match="not ready in 1s"):
        await service.wait_ready(within_s=1)
    await service.stop(grace_s=5)
    assert (service.starts, service.kills) == (2, 1)


async def test_a_service_that_dies_before_it_is_ready_fails_with_its_log(tmp_path: Path) -> None:
    service = fake(tmp_path, "import sys; print('bad settings', file=sys.stderr); sys.exit(3)")
    service.start()

    with pytest.raises(LaunchError, match=r"(?s)fake exited \(3\).*bad settings"):
        await service.wait_ready(within_s=20)


async def test_a_service_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    ignores = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    service = fake(tmp_path, ignores + f"print({READY!r}, flush=True); time.sleep(60)")
    service.start()
    await service.wait_ready(within_s=20)

    code = await service.stop(grace_s=0.5)

    assert code == -signal.SIGKILL


def test_each_service_process_gets_its_own_principal_and_none_of_the_launchers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLDEM_KAFKA_SASL_USERNAME", "admin")
    monkeypatch.setenv("HOLDEM_KAFKA_SSL_CAFILE", "/the/launchers/ca.pem")
    dealer = KafkaConnection("127.0.0.1:1", "SASL_PLAINTEXT", "SCRAM-SHA-512", "dealer", "pw")
    launcher = Launcher("127.0.0.1:1", tmp_path, credentials={"dealer": dealer})
    env = launcher.env_for("dealer")
    assert KafkaConnection.from_env(env) == dealer
    assert "HOLDEM_KAFKA_SSL_CAFILE" not in env
    # Without credentials a service inherits the launcher's HOLDEM_KAFKA_* (an outside broker).
    assert launcher.env_for("wallet")["HOLDEM_KAFKA_SASL_USERNAME"] == "admin"


def test_two_instances_per_service_get_their_own_ids_logs_and_only_one_metrics_port(
    tmp_path: Path,
) -> None:
    launcher = Launcher("127.0.0.1:9092", tmp_path, metrics_ports={"wallet": 9102}, instances=2)

    wallets = launcher.instances_of("wallet")
    assert [s.label for s in wallets] == ["wallet", "wallet-1"]
    assert [s.env["HOLDEM_INSTANCE_ID"] for s in wallets] == ["0", "1"]
    assert [s.env["HOLDEM_METRICS_PORT"] for s in wallets] == ["9102", "0"]
    # make serve's /metrics on this host only (issue 30: it took 0.0.0.0:9101-9105)
    assert {s.env["HOLDEM_METRICS_HOST"] for s in launcher.services.values()} == {"127.0.0.1"}
    assert len({s.log_path for s in launcher.services.values()}) == 2 * len(SERVICES)


async def test_a_retired_instance_is_stopped_for_good_and_a_new_one_takes_a_fresh_id(
    tmp_path: Path,
) -> None:
    launcher = Launcher("127.0.0.1:9092", tmp_path, instances=2)
    for service in launcher.services.values():  # stand-ins that serve until SIGTERM
        service.argv = [sys.executable, "-c", SERVES]
    await launcher.start(["wallet", "wallet-1"], within_s=20)

    assert await launcher.retire("wallet-1") == -signal.SIGTERM
    assert [s.label for s in launcher.instances_of("wallet", live=True)] == ["wallet"]
    fresh = launcher._new_instance("wallet")
    assert (fresh.label, fresh.env["HOLDEM_INSTANCE_ID"]) == ("wallet-2", "2")
    await launcher.stop()
