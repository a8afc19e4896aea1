"""A transaction's records acknowledged before its offsets are sent (ADR 036), with a bound.

Kafka's transaction verification (KIP-890) has a partition's leader ask the transaction
coordinator whether a produce belongs to an open transaction. While the coordinator is writing
the transaction's AddOffsetsToTxn, it answers CONCURRENT_TRANSACTIONS, which the leader passes to
aiokafka's produce version as NOT_ENOUGH_REPLICAS: the batch is sent again after the producer's
retry backoff. Sending the offsets only once every record is acknowledged keeps the two writes
apart. The wait is bounded: an idempotent producer retries a batch for ever (aiokafka never
expires it), and after a broker's kill -9 it may never be answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any


class Unacknowledged(RuntimeError):
    """Records of the transaction not acknowledged within the bound: the transaction cannot end
    well (the broker aborts it at its timeout); the process must not wait on it."""


async def acknowledged(sent: Sequence[asyncio.Future[Any]], within_s: float) -> None:
    """Return once every future in ``sent`` (aiokafka's send futures) is done; re-raise the
    first failure among them; Unacknowledged if some are still pending after ``within_s``."""
    if not sent:
        return
    done, pending = await asyncio.wait(sent, timeout=within_s)
    failures = [error for future in done if (error := future.exception()) is not None]
    if failures:
        raise failures[0]
    if pending:
        raise Unacknowledged(
            f"{len(pending)} of {len(sent)} records unacknowledged after {within_s} s"
        )
