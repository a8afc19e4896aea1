"""`make serve`: a broker kept between runs, the services up until Ctrl-C, and where to connect."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from holdem.core.wire.connection import KafkaConnection

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]

READY_LINE = "Ctrl-C stops"
UP_TIMEOUT_S = 240


def test_serve_stays_up_prints_where_to_connect_and_keeps_the_data_after_ctrl_c(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "serve"
    kafka_sh = Path(__file__).resolve().parents[2] / "deploy" / "kafka" / "kafka.sh"
    command = [sys.executable, "-m", "holdem.ops.serve", "--dir", str(run_dir)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_KAFKA_")}
    serve = subprocess.Popen(
        [*command, "--no-metrics"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert serve.stdout is not None
        for line in serve.stdout:  # bounded by the test's timeout; an early exit ends the loop
            lines.append(line)
            if READY_LINE in line:
                break
        printed = "".join(lines)
        assert READY_LINE in printed, printed
        assert serve.poll() is None, printed  # still up
        bootstrap = re.search(r"Kafka at (\S+)", printed)
        assert bootstrap is not None, printed
        operator_env = run_dir / "clients" / "operator.env"
        assert f"operator credentials: {operator_env}" in printed
        assert KafkaConnection.from_file(operator_env).bootstrap == bootstrap.group(1)
        for name in ("dealer", "wallet", "settlement", "query"):
            assert str(run_dir / "services" / f"{name}.log") in printed
        serve.send_signal(signal.SIGINT)
        rest, _ = serve.communicate(timeout=UP_TIMEOUT_S)
        stopped = subprocess.run(
            [str(kafka_sh), "status", "--dir", str(run_dir)], capture_output=True, check=False
        )
        kept = (run_dir / "state").is_file() and (run_dir / "data" / "meta.properties").is_file()
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
        subprocess.run(
            [str(kafka_sh), "down", "--dir", str(run_dir), "--wipe"],
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert serve.returncode == 0, printed + rest
    assert "data kept" in rest
    assert stopped.returncode == 3  # the broker is down ...
    assert kept  # ... and its storage is there for the next `make serve`
