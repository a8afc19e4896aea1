"""The service's consume-transform-produce loop: one transaction per poll batch.

Each poll batch is decided record by record against the state, then every event it produced and
the batch's consumer offsets are committed in one transaction (on Kafka,
``send_offsets_to_transaction``): effects and progress commit or abort together. No framework
work per record. The loop runs over ``holdem.runtime.transport``: Kafka in a service
(``holdem.runtime.kafka``), an in-memory log in the tests (``holdem.runtime.memory``), with the
same batches and transactions. A record is decided only once the state of its partition is
rebuilt for the current assignment; a replay that fails, or a producer that cannot commit, ends
the process (status 70) for its supervisor to restart.

This module keeps the wiring, the poll cycle and the dispatch of each record to the processor;
the other jobs are handed a ``Wiring`` (ADR 035): the batch's commit (``checkpoint``), the
rebalance listener and the rebuild (``rebuild``), the periodic watches (``watches``), the book
(``book``) and what they share of the group membership (``member``)."""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from holdem.core.wire.topics import snapshot_topic
from holdem.runtime.book import BookTail
from holdem.runtime.checkpoint import Checkpoint
from holdem.runtime.member import GroupMember
from holdem.runtime.outbox import FatalError, TransactionalOutbox
from holdem.runtime.processor import Processor
from holdem.runtime.rebuild import Rebuild, Rebuilder
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.transport import Batch, GroupSettings, Transport, type_header
from holdem.runtime.watches import Watches
from holdem.runtime.wiring import Fatal, Wiring, stop_reading

log = structlog.get_logger(__name__)
MAX_BATCH = 500  # records per poll: one transaction each
# Records decided between two turns of the event loop. A batch is decided without awaiting
# anything (its records are buffered for the commit), so the heartbeat, the metrics endpoint and
# the watches would wait for all of it: at the soak's load a process with a fifth of a core took
# over the 6 s session on a batch and its snapshot, and the group evicted it. A turn costs a few
# microseconds; 32 records are a few milliseconds of deciding.
YIELD_EVERY = 32
SESSION_TIMEOUT_MS = 6_000  # the default (RuntimeSettings): the broker's minimum
HEARTBEAT_MS = 1_000
# aiokafka's default: a member that polls nothing for this long leaves its group. A rebuild is
# the loop's work, not idleness, and counts as polling (``Rebuilder._rebuilding``); the
# replay's own progress timeout is what stops a rebuild that gets nowhere.
MAX_POLL_INTERVAL_MS = 300_000


def wiring_of(
    processor: Processor[Any],
    outbox: TransactionalOutbox,
    settings: RuntimeSettings,
    fatal: Fatal,
    transport: Transport,
) -> Wiring:
    """What the loop's jobs are handed of the processor."""
    spec, topic_of = processor.spec, processor.topic_of
    return Wiring(
        name=spec.name,
        settings=settings,
        transport=transport,
        outbox=outbox,
        metrics=processor.metrics,
        lock=processor.lock,
        store=processor.store,
        fatal=fatal,
        forget=processor.reset,
        inputs=tuple(topic_of(role) for role in spec.inputs),
        state_topics=tuple(topic_of(role) for role in spec.state_roles),
        book_topics=tuple(topic_of(role) for role in spec.book_roles),
        snapshot_topic=snapshot_topic(settings.topics, spec.name),
        fold=processor.fold,
        fold_book=processor.fold_book,
        wants=processor.wants,
        check_book=spec.check_book,
    )


class ServiceLoop:
    """One service instance's consumer, outbox and processor."""

    def __init__(
        self,
        processor: Processor[Any],
        outbox: TransactionalOutbox,
        settings: RuntimeSettings,
        fatal: Fatal,
        transport: Transport,
    ) -> None:
        self.processor = processor
        self.outbox = outbox
        self.settings = settings
        self.transport = transport
        scope = f"{settings.topic_prefix}." if settings.topic_prefix else ""
        self.group_id = f"{scope}holdem-{processor.spec.name}"
        self.client_id = f"{self.group_id}-{settings.instance_id}"
        self.wiring = wiring_of(processor, outbox, settings, fatal, transport)
        # Static membership (ADR 037): the group knows this instance by its id across restarts.
        self.instance_id = settings.instance_id if settings.static_membership else None
        self.group = GroupMember(self.instance_id)
        self.book = BookTail(self.wiring)
        self.rebuilder = Rebuilder(self.wiring, self.group, self.book)
        self.checkpoint = Checkpoint(self.wiring, self.group, self.group_id)
        self.watches = Watches(self.wiring, self.group, self.group_id)
        self._task: asyncio.Task[None] | None = None

    def healthy(self) -> bool:
        return self.group.healthy()

    async def start(self) -> None:
        consumer = self.transport.consumer(
            GroupSettings(
                group_id=self.group_id,
                client_id=self.client_id,
                max_records=MAX_BATCH,
                session_timeout_ms=self.settings.session_timeout_ms,
                heartbeat_ms=HEARTBEAT_MS,
                max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
                instance_id=self.instance_id,
            )
        )
        self.group.consumer = consumer
        consumer.subscribe(list(self.wiring.inputs), listener=Rebuild(self.wiring, self.group))
        await self.book.start()
        await consumer.start()
        self._task = asyncio.create_task(self._run(), name=f"{self.group_id}-loop")

    async def stop(self) -> None:
        await self.stop_task()
        await self.stop_consumer()
        await self.book.stop()

    async def stop_task(self) -> None:
        """Cancel the poll loop (a batch in flight aborts; its records are read again)."""
        await stop_reading(self._task, None)

    async def stop_consumer(self) -> None:
        # A member leaves the group on stop (a static one too: kafka_internals): a quick hand-over.
        await stop_reading(None, self.group.consumer)

    async def _rebuild_pending(self) -> None:
        """The caller holds the processor's lock."""
        partitions, self.group.pending = self.group.pending, None
        if partitions is not None:
            await self.rebuilder.rebuild(partitions)
            self.checkpoint.snapshot_later()

    async def _run(self) -> None:
        consumer = self.group.consumer
        assert consumer is not None
        try:
            while True:
                if self.group.pending is not None:
                    async with self.processor.lock:
                        await self._rebuild_pending()
                batch = await consumer.getmany(timeout_ms=100, max_records=MAX_BATCH)
                if batch:
                    await self._decide(batch)
        except asyncio.CancelledError as error:
            task = asyncio.current_task()
            if task is None or task.cancelling():  # stopped by us
                raise
            # A library's own cancellation leaking out (aiokafka's consumer stop did): the loop
            # would end silently and the instance stay up deciding nothing.
            log.error("consumer loop cancelled from inside")
            self.wiring.fatal(error)
        except FatalError as error:
            self.wiring.fatal(error)
        except Exception as error:  # the loop itself broke: nothing would be decided any more
            log.exception("consumer loop failed")
            self.wiring.fatal(error)

    async def _decide(self, batch: Batch) -> None:
        processor, checkpoint = self.processor, self.checkpoint
        async with processor.lock:
            await self._rebuild_pending()  # assigned while this batch was fetched: its records
            # Fetched before a revoke, or by a member that is no longer one: the next
            # assignment reads these records again from the committed offsets.
            if not self.group.ready or not self.group.member():
                return
            checkpoint.begin()
            decided = 0
            for tp, records in batch.items():
                for record in records:
                    decided += 1
                    if decided % YIELD_EVERY == 0:
                        await asyncio.sleep(0)  # the heartbeat's turn (the lock stays held)
                    if record.value is None:  # a tombstone: bad input too, never dropped
                        await processor.tombstone(
                            tp.topic, tp.partition, record.offset, record.key, record.headers
                        )
                    elif processor.wants(tp.topic, type_header(record.headers)):
                        await processor.process(
                            tp.topic,
                            tp.partition,
                            record.offset,
                            record.value,
                            record.key,
                            record.headers,
                        )
                checkpoint.store_offset(tp, records[-1].offset + 1, len(records))
            await checkpoint.commit()
