"""A dealer whose key ring cannot open its vault (real broker): it says so and exits non-zero."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys

import pytest
from support.dealer import sealed
from support.kafka import Cluster
from support.kafka_io import produce

from holdem.core.contracts import dump
from holdem.core.wire.topics import Topics
from holdem.runtime.app import EXIT_FATAL

pytestmark = pytest.mark.kafka
BOUND_S = 120  # a bound on a hung process, not a speed requirement


async def test_a_dealer_that_cannot_open_a_vault_record_exits_non_zero(
    kafka: Cluster, topics: Topics
) -> None:
    record = sealed()  # sealed with the tests' key "test-1"
    await produce(kafka.admin, topics.vault, record.player_id, dump(record))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_KAFKA_")},
        **kafka.connection("dealer").env(),
        "HOLDEM_TOPIC_PREFIX": topics.commands.removesuffix(".holdem.commands"),
        "HOLDEM_PARTITIONS": "3",
        "HOLDEM_METRICS_PORT": "0",
        "HOLDEM_DEALER_VAULT_KEYS": "other:" + base64.b64encode(os.urandom(32)).decode(),
    }
    code = "from holdem.dealer.app import main; main()"

    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )

    output = done.stdout + done.stderr
    assert done.returncode == EXIT_FATAL, output  # the failed replay ends the process
    assert "vault record cannot be opened" in output
    assert "unknown vault key id" in output.splitlines()[-1]
