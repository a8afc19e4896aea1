"""kafka.sh keeps a broker's data, ports and credentials across a restart; --tls is SASL_SSL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.kafka_io import produce, read_all

from holdem.core.wire.topics import Topics
from holdem.ops.broker import LocalBroker
from holdem.runtime.topic_setup import ensure_topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


@pytest.fixture
async def kept_tls_broker(tmp_path: Path) -> AsyncIterator[LocalBroker]:
    """A broker of its own (not the session's): SASL_SSL, its data kept between runs."""
    broker = LocalBroker(tmp_path / "kafka", tls=True, keep=True)
    try:
        await asyncio.to_thread(broker.up)
        yield broker
    finally:
        await asyncio.to_thread(broker.down, wipe=True)


async def test_clients_connect_over_sasl_ssl_with_the_ca_file(
    kept_tls_broker: LocalBroker,
) -> None:
    operator = kept_tls_broker.connection("operator")
    assert operator.security_protocol == "SASL_SSL"
    assert operator.ssl_cafile == str(kept_tls_broker.run_dir / "tls" / "ca.pem")
    topics = Topics()
    await ensure_topics(kept_tls_broker.connection("admin"), topics, partitions=1)
    await produce(operator, topics.commands, "p1", b"over TLS")
    await produce(kept_tls_broker.connection("admin"), topics.rounds, "p1", b"event")
    assert [r.value for r in await read_all(operator, topics.rounds)] == [b"event"]


async def test_a_restart_keeps_records_address_credentials_and_acls(
    kept_tls_broker: LocalBroker,
) -> None:
    broker = kept_tls_broker
    bootstrap, operator = broker.bootstrap, broker.connection("operator")
    admin, topics = broker.connection("admin"), Topics()
    await ensure_topics(admin, topics, partitions=1)
    await produce(operator, topics.commands, "p1", b"before the restart")

    assert await asyncio.to_thread(broker.restart) == bootstrap  # kafka.sh restart
    assert broker.connection("operator") == operator  # the same credentials file content
    await produce(operator, topics.commands, "p1", b"after the restart")

    await asyncio.to_thread(broker.down)  # keep: the data stays
    assert await asyncio.to_thread(broker.up) == bootstrap  # kafka.sh up on the kept data
    await produce(operator, topics.commands, "p1", b"after down and up")
    records = await read_all(admin, topics.commands)
    assert [r.value for r in records] == [
        b"before the restart",
        b"after the restart",
        b"after down and up",
    ]
