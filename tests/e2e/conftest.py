"""The services in this process on the test's fresh topics, for the operator-facing e2e tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from support.kafka import Cluster
from support.stack import Stack

from holdem.client import Topics


@pytest.fixture
async def stack(kafka: Cluster, topics: Topics) -> AsyncIterator[Stack]:
    """Dealer, wallet and settlement on ``topics``; forced decks through ``stack.decks``."""
    services = Stack(kafka, topics)
    await services.open()
    try:
        yield services
    finally:
        await services.close()
