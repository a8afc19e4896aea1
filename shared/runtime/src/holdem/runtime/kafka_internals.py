"""Every use of aiokafka's private API, in one module: it names the versions it was tested with
and refuses others at import, so an upgrade of aiokafka fails loudly here, not silently in a loop.

1. Generation-fenced transactional offset commits (KIP-447). aiokafka sends a transaction's
   consumer offsets with TxnOffsetCommit v0, which names the group only: the group coordinator
   accepts it from a member that has lost its partitions. A member frozen past its session (a
   broker restart, a stalled process) can then commit a batch that the partition's new owner
   decides again: a payout paid twice, a round dealt with two decks (found by `make chaos`,
   ADR 017). Version 3 of the request carries the member's generation and member id, and the
   coordinator refuses it (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) from a
   member that is no longer the one it assigned the partitions to; the transaction then aborts,
   so nothing that member decided becomes visible. ``install()`` (called by the outbox before its
   producer starts) swaps aiokafka's TxnOffsetCommit handler for one that sends v3 with the
   identity the outbox gives its producer (``send_offsets_as``); without one it sends v0.
2. Stable committed offsets (KIP-447's other half). aiokafka asks a group's committed offsets with
   OffsetFetch v3, which answers the last committed offset even while a transaction that
   commits a newer one is still open. A member frozen past its session (a paused container) has
   such a transaction: its partitions move, the new owner starts from the older offset and
   decides the frozen member's batch again, and the thawed member's transaction then commits
   too (two settlements of one round: the frozen-settlement test). Version 7 asks with
   ``require_stable``: the coordinator answers UNSTABLE_OFFSET_COMMIT until that transaction has
   committed or aborted. ``install()`` has aiokafka's coordinator send v7, and hands it that
   answer as the "group loading" one it already asks again after.
3. High watermarks from a read_committed consumer (``high_watermarks``): aiokafka takes the
   isolation level of a ListOffsets from the consumer's, and a replay needs both ends of the
   partitions it reads (``replay.settled_ends``) without a second client's connection and login.
4. The consumer's group membership as the coordinator knows it (member id, generation, a rejoin
   pending) and its poll clock (a rebuild counts as polling): ``membership``, ``busy``.
5. A partition's fetch position without waiting for it (``known_position``): aiokafka's
   ``position`` waits for the committed offset, for ever if the coordinator keeps answering
   that it is unstable (a transaction that never ends): the stall watch must not hang with it.
6. A request of our own (``holdem.runtime.open_transactions``: DescribeProducers,
   ListTransactions) sent on a consumer's connections: ``send_to``, ``leader_of``, ``brokers``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import aiokafka
import aiokafka.errors as errors
from aiokafka.consumer import group_coordinator as aiokafka_coordinator
from aiokafka.consumer.fetcher import READ_UNCOMMITTED
from aiokafka.producer import sender as aiokafka_sender
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    Boolean,
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Int64,
    Schema,
    TaggedFields,
)

from holdem.runtime.transport import Member, Membership

__all__ = [
    "FENCED",
    "Member",
    "Membership",
    "brokers",
    "busy",
    "high_watermarks",
    "install",
    "known_position",
    "leader_of",
    "membership",
    "send_offsets_as",
    "send_to",
]

TESTED = ("0.14.",)  # aiokafka releases whose private API this module was tested with
if not aiokafka.__version__.startswith(TESTED):
    raise ImportError(
        f"holdem.runtime.kafka_internals was tested with aiokafka {TESTED}, not "
        f"{aiokafka.__version__}: check the private API it uses before allowing it"
    )

# The coordinator's answers to an offset commit from a member it no longer knows as the owner.
FENCED = (
    errors.IllegalGenerationError,
    errors.UnknownMemberIdError,
    errors.RebalanceInProgressError,
    getattr(errors, "FencedInstanceIdError", errors.UnknownMemberIdError),
)


_MEMBER = "holdem_member"  # the attribute of a producer's transaction manager that names it


async def send_offsets_as(
    producer: aiokafka.AIOKafkaProducer,
    offsets: dict[Any, int],
    group_id: str,
    member: Member | None,
) -> None:
    """``producer.send_offsets_to_transaction`` as ``member`` of the group (None: unfenced, v0).
    The member rides on this producer's own transaction manager, which the handler reads."""
    setattr(producer._txn_manager, _MEMBER, member)
    await producer.send_offsets_to_transaction(offsets, group_id)


class TxnOffsetCommitResponse_v3(Response):  # type: ignore[misc]
    API_KEY = 28
    API_VERSION = 3
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                (
                    "partitions",
                    CompactArray(
                        ("partition_index", Int32), ("error_code", Int16), ("tags", TaggedFields)
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class TxnOffsetCommitRequest_v3(RequestStruct):  # type: ignore[misc]
    FLEXIBLE_VERSION = True
    API_KEY = 28
    API_VERSION = 3
    RESPONSE_TYPE = TxnOffsetCommitResponse_v3
    SCHEMA = Schema(
        ("transactional_id", CompactString("utf-8")),
        ("group_id", CompactString("utf-8")),
        ("producer_id", Int64),
        ("producer_epoch", Int16),
        ("generation_id", Int32),
        ("member_id", CompactString("utf-8")),
        ("group_instance_id", CompactString("utf-8")),
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                (
                    "partitions",
                    CompactArray(
                        ("partition_index", Int32),
                        ("committed_offset", Int64),
                        ("committed_leader_epoch", Int32),
                        ("committed_metadata", CompactString("utf-8")),
                        ("tags", TaggedFields),
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _FencedTxnOffsetCommit(Request[TxnOffsetCommitRequest_v3]):  # type: ignore[misc]
    API_KEY = 28

    def __init__(self, fields: dict[str, Any], member: Member) -> None:
        self._fields = fields
        self._member = member

    def build(
        self, request_struct_class: type[TxnOffsetCommitRequest_v3]
    ) -> TxnOffsetCommitRequest_v3:
        f, m = self._fields, self._member
        topics: list[Any] = [
            (topic, [(p, offset, -1, metadata, {}) for p, offset, metadata in partitions], {})
            for topic, partitions in f["topics"]
        ]
        return request_struct_class(
            f["transactional_id"],
            f["group_id"],
            f["producer_id"],
            f["producer_epoch"],
            m.generation,
            m.member_id,
            m.group_instance_id,
            topics,
            {},
        )


@dataclass(frozen=True)
class _AsV0:
    """A v3 response in the shape aiokafka's handler reads (``errors``: topic, partition codes)."""

    errors: list[tuple[str, list[tuple[int, int]]]]


class FencedTxnOffsetCommitHandler(aiokafka_sender.TxnOffsetCommitHandler):  # type: ignore[misc]
    """aiokafka's handler, sending v3 with the member's identity when the outbox gave one."""

    def create_request(self) -> Any:
        request = super().create_request()
        member = getattr(self._sender._txn_manager, _MEMBER, None)
        if member is None:
            return request
        fields = {
            "transactional_id": request._transactional_id,
            "group_id": request._group_id,
            "producer_id": request._producer_id,
            "producer_epoch": request._producer_epoch,
            "topics": request._topics,
        }
        return _FencedTxnOffsetCommit(fields, member)

    def handle_response(self, resp: Any) -> Any:
        if not isinstance(resp, TxnOffsetCommitResponse_v3):
            return super().handle_response(resp)
        codes = [
            (name, [(p, code) for p, code, _ in partitions]) for name, partitions, _ in resp.topics
        ]
        for _, partitions in codes:
            for _, code in partitions:
                error = errors.for_code(code)
                if error in FENCED:
                    # The transaction must not commit: what this member decided is another's now.
                    self._sender._txn_manager.error_transaction(error(self._group_id))
                    return None
        return super().handle_response(_AsV0(codes))


UNSTABLE_OFFSET_COMMIT = 88  # a transaction that commits offsets of the partition is open
_GROUP_LOADING = errors.GroupLoadInProgressError.errno  # what aiokafka asks again after


class OffsetFetchResponse_v7(Response):  # type: ignore[misc]
    """Decoded into the shape aiokafka's coordinator reads from v1 to v3 (topic, [(partition,
    offset, metadata, error code)]); an unstable offset reads as a group still loading."""

    API_KEY = 9
    API_VERSION = 7
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                (
                    "partitions",
                    CompactArray(
                        ("partition_index", Int32),
                        ("committed_offset", Int64),
                        ("committed_leader_epoch", Int32),
                        ("metadata", CompactString("utf-8")),
                        ("error_code", Int16),
                        ("tags", TaggedFields),
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("error_code", Int16),
        ("tags", TaggedFields),
    )

    @classmethod
    def decode(cls, data: Any) -> OffsetFetchResponse_v7:
        response: OffsetFetchResponse_v7 = super().decode(data)
        response.topics = [
            (
                name,
                [
                    (
                        p,
                        offset,
                        metadata or "",
                        _GROUP_LOADING if code == UNSTABLE_OFFSET_COMMIT else code,
                    )
                    for p, offset, _epoch, metadata, code, _ in partitions
                ],
            )
            for name, partitions, _ in response.topics
        ]
        return response


class OffsetFetchRequest_v7(RequestStruct):  # type: ignore[misc]
    FLEXIBLE_VERSION = True
    API_KEY = 9
    API_VERSION = 7
    RESPONSE_TYPE = OffsetFetchResponse_v7
    SCHEMA = Schema(
        ("group_id", CompactString("utf-8")),
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                ("partition_indexes", CompactArray(Int32)),
                ("tags", TaggedFields),
            ),
        ),
        ("require_stable", Boolean),
        ("tags", TaggedFields),
    )


class StableOffsetFetchRequest(Request[OffsetFetchRequest_v7]):  # type: ignore[misc]
    """aiokafka's OffsetFetchRequest as the coordinator builds it, sent as v7 with
    ``require_stable`` (a broker without v7, older than Kafka 2.5, is refused)."""

    API_KEY = 9

    def __init__(self, consumer_group: str, partitions: list[tuple[str, list[int]]]) -> None:
        self._consumer_group = consumer_group
        self._partitions = partitions

    def build(self, request_struct_class: type[OffsetFetchRequest_v7]) -> OffsetFetchRequest_v7:
        topics: list[Any] = [(topic, list(indexes), {}) for topic, indexes in self._partitions]
        return request_struct_class(self._consumer_group, topics, True, {})


def install() -> None:
    """Have aiokafka's sender build our handler for every TxnOffsetCommit (a producer that names
    no member still sends v0), and its consumers' coordinators ask stable committed offsets
    (idempotent)."""
    aiokafka_sender.TxnOffsetCommitHandler = FencedTxnOffsetCommitHandler
    aiokafka_coordinator.OffsetFetchRequest = StableOffsetFetchRequest


def membership(consumer: aiokafka.AIOKafkaConsumer) -> Membership:
    """The member id, generation and whether a rejoin is pending (aiokafka's coordinator)."""
    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None:
        return Membership(None, None, False)
    member_id = getattr(coordinator, "member_id", None)
    rejoin = getattr(coordinator, "_rejoin_needed_fut", None)
    return Membership(
        member_id if isinstance(member_id, str) else None,
        getattr(coordinator, "generation", None),
        rejoin is not None and rejoin.done(),
    )


def known_position(consumer: aiokafka.AIOKafkaConsumer, tp: aiokafka.TopicPartition) -> int | None:
    """The consumer's fetch position of ``tp``, None while it has none (not assigned, or its
    committed offset not fetched yet); never waits."""
    subscription = getattr(getattr(consumer, "_subscription", None), "subscription", None)
    assignment = getattr(subscription, "assignment", None)
    state = assignment.state_value(tp) if assignment is not None else None
    if state is None or not state.has_valid_position:
        return None
    position: int = state.position
    return position


def busy(consumer: aiokafka.AIOKafkaConsumer) -> contextlib.AbstractContextManager[Any]:
    """A context in which the member counts as polling (its poll clock, the one a fetch holds
    still), so a long rebuild does not make it leave the group after max_poll_interval."""
    subscription = getattr(consumer, "_subscription", None)
    fetching = getattr(subscription, "fetch_context", None)
    return fetching() if callable(fetching) else contextlib.nullcontext()


async def high_watermarks(
    consumer: aiokafka.AIOKafkaConsumer, tps: list[aiokafka.TopicPartition]
) -> dict[aiokafka.TopicPartition, int]:
    """The high watermarks of ``tps`` (a read_uncommitted ListOffsets), asked by ``consumer``
    before it is assigned anything: with nothing assigned it fetches nothing, so no fetch can
    be sent with the isolation level lent to the offset request."""
    if consumer.assignment():
        raise RuntimeError("high_watermarks is for a consumer not assigned anything yet")
    fetcher = consumer._fetcher
    kept = fetcher._isolation_level
    fetcher._isolation_level = READ_UNCOMMITTED
    try:
        found: dict[aiokafka.TopicPartition, int] = await consumer.end_offsets(tps)
        return found
    finally:
        fetcher._isolation_level = kept


async def send_to(consumer: aiokafka.AIOKafkaConsumer, node_id: int, request: Request[Any]) -> Any:
    """``request`` sent to node ``node_id`` on ``consumer``'s client; the decoded response."""
    return await consumer._client.send(node_id, request)


def leader_of(consumer: aiokafka.AIOKafkaConsumer, tp: aiokafka.TopicPartition) -> int:
    """The node leading ``tp`` in ``consumer``'s metadata (LookupError if it knows none)."""
    leader = consumer._client.cluster.leader_for_partition(tp)
    if leader is None or leader < 0:
        raise LookupError(f"no known leader for {tp}")
    return int(leader)


def brokers(consumer: aiokafka.AIOKafkaConsumer) -> list[int]:
    """The node ids ``consumer``'s metadata knows."""
    return sorted(broker.nodeId for broker in consumer._client.cluster.brokers())
