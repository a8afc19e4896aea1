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
   answer as the "group loading" one it already asks again after. From v2 on, a group-level
   error (a restarted broker still loading its groups: COORDINATOR_LOAD_IN_PROGRESS,
   NOT_COORDINATOR) comes as the answer's own error code with no partitions, which aiokafka
   (reading partitions only) took for "no committed offset": the member would start over from
   the earliest offset (issue 26). The error is handed to every partition asked, where aiokafka
   asks again after the retriable ones and raises the others.
3. High watermarks from a read_committed consumer (``high_watermarks``): aiokafka takes the
   isolation level of a ListOffsets from the consumer's, and a replay needs both ends of the
   partitions it reads (``replay.settled_ends``) without a second client's connection and login.
4. The consumer's group membership as the coordinator knows it (member id, generation, a rejoin
   pending) and its poll clock (a rebuild counts as polling): ``membership``, ``busy``.
5. A partition's fetch position without waiting for it (``known_position``): aiokafka's
   ``position`` waits for the committed offset, for ever if the coordinator keeps answering
   that it is unstable (a transaction that never ends): the stall watch must not hang with it.
6. Static membership (KIP-345, ADR 037). aiokafka joins with ``group_instance_id`` but heartbeats
   with v1, which names no instance id: when a second process joins with the same id, the
   broker gives it the member's place, and the first one's heartbeat, answered UNKNOWN_MEMBER_ID,
   rejoins and takes the place back, every second, both staying up. ``install()`` has the
   heartbeat sent as v3 naming the instance id, which the broker answers FENCED_INSTANCE_ID: the
   first process then fails with ``InstanceFencedError``. And aiokafka sends no LeaveGroup for a
   static member when it stops, so a graceful stop would leave its partitions idle for a
   session timeout: ``install()`` has the coordinator's close send LeaveGroup v3 naming the
   instance (a kill -9 sends nothing: its restart takes the place back with no rebalance).
7. A request of our own (``holdem.runtime.open_transactions``: DescribeProducers,
   ListTransactions) sent on a consumer's connections: ``send_to``, ``leader_of``, ``brokers``.
8. The fetch wait changed while the consumer runs (``set_fetch_wait``, ``fetch_wait``:
   ``holdem.runtime.fetch_wait``). aiokafka takes ``fetch_max_wait_ms`` once, at construction,
   and its fetcher reads it into every FetchRequest it builds: setting the fetcher's copy makes
   the next fetch carry the new wait (a fetch already waiting at the broker keeps its own).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any

import aiokafka
import aiokafka.errors as errors
import structlog
from aiokafka.consumer import group_coordinator as aiokafka_coordinator
from aiokafka.consumer.fetcher import READ_UNCOMMITTED
from aiokafka.producer import sender as aiokafka_sender
from aiokafka.protocol import group as aiokafka_group
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    Array,
    Boolean,
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Int64,
    Schema,
    String,
    TaggedFields,
)

from holdem.runtime.outbox import FatalError
from holdem.runtime.transport import Member, Membership

__all__ = [
    "FENCED",
    "InstanceFencedError",
    "Member",
    "Membership",
    "brokers",
    "busy",
    "fetch_wait",
    "high_watermarks",
    "install",
    "known_position",
    "leader_of",
    "membership",
    "send_offsets_as",
    "send_to",
    "set_fetch_wait",
]

TESTED = ("0.14.",)  # aiokafka releases whose private API this module was tested with
if not aiokafka.__version__.startswith(TESTED):
    raise ImportError(
        f"holdem.runtime.kafka_internals was tested with aiokafka {TESTED}, not "
        f"{aiokafka.__version__}: check the private API it uses before allowing it"
    )

log = structlog.get_logger(__name__)


class FencedInstanceIdError(errors.BrokerResponseError):  # type: ignore[misc]
    """FENCED_INSTANCE_ID, which aiokafka does not know (it would read it as an unknown error)."""

    errno = 82
    message = "FENCED_INSTANCE_ID"
    description = "another process joined the group with this member's group.instance.id"


class InstanceFencedError(FatalError):
    """The broker gave this member's place to another process with the same instance id: the
    process ends (status 70) saying so; its supervisor's restart fences the other in turn, so a
    twin shows as a restart loop (alert HoldemRestartLoop) until one of them is stopped."""

    @classmethod
    def of(cls, group_id: str, instance_id: str) -> InstanceFencedError:
        return cls(
            "fenced: another process joined the group with this HOLDEM_INSTANCE_ID "
            f"({instance_id}, group {group_id}): give each instance its own"
        )


# The coordinator's answers to an offset commit from a member it no longer knows as the owner.
FENCED = (
    errors.IllegalGenerationError,
    errors.UnknownMemberIdError,
    errors.RebalanceInProgressError,
    FencedInstanceIdError,
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
# A group-level error as aiokafka's per-partition handling knows it: COORDINATOR_NOT_AVAILABLE
# (15) has the remedy of NOT_COORDINATOR (16), finding the coordinator again; aiokafka would
# take it for an unknown error. The others stay themselves (loading: asked again; the rest,
# an authorization failure say, raised).
_AS_PARTITION_ERROR = {
    errors.GroupCoordinatorNotAvailableError.errno: errors.NotCoordinatorForGroupError.errno
}
Asked = list[tuple[str, list[int]]]  # an OffsetFetch's topics and their partitions


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
        struct = request_struct_class(self._consumer_group, topics, True, {})
        # aiokafka's connection decodes the answer with the sent struct's RESPONSE_TYPE: this
        # one knows what was asked, so a group-level error reaches every partition.
        asked = [(topic, list(indexes)) for topic, indexes in self._partitions]
        struct.RESPONSE_TYPE = AnswerTo(asked)  # type: ignore[assignment]
        return struct


@dataclass(frozen=True)
class AnswerTo:
    """The decoder of one OffsetFetch v7's answer, knowing which partitions it asked."""

    asked: Asked

    def decode(self, data: Any) -> OffsetFetchResponse_v7:
        """The answer; a group-level error becomes every asked partition's (aiokafka reads
        only the partitions)."""
        response = OffsetFetchResponse_v7.decode(data)
        if response.error_code != 0:
            code = _AS_PARTITION_ERROR.get(response.error_code, response.error_code)
            response.topics = [
                (name, [(p, -1, "", code) for p in partitions]) for name, partitions in self.asked
            ]
        return response


class HeartbeatRequest_v3(RequestStruct):  # type: ignore[misc]
    API_KEY = 12
    API_VERSION = 3
    RESPONSE_TYPE = aiokafka_group.HeartbeatResponse_v1  # the same fields up to v3
    SCHEMA = Schema(
        ("group", String("utf-8")),
        ("generation_id", Int32),
        ("member_id", String("utf-8")),
        ("group_instance_id", String("utf-8")),
    )


@dataclass
class _Beat:
    """One heartbeat of a static member: its instance id, and whether the broker fenced it."""

    instance_id: str
    fenced: bool = False

    def decode(self, data: Any) -> Any:
        response = aiokafka_group.HeartbeatResponse_v1.decode(data)
        self.fenced = response.error_code == FencedInstanceIdError.errno
        return response


_BEAT: contextvars.ContextVar[_Beat | None] = contextvars.ContextVar("holdem_beat", default=None)
_HeartbeatStruct = aiokafka_group.HeartbeatRequest_v0 | aiokafka_group.HeartbeatRequest_v1


class StaticHeartbeatRequest(Request[_HeartbeatStruct | HeartbeatRequest_v3]):  # type: ignore[misc]
    """aiokafka's HeartbeatRequest as its coordinator builds it; a static member's (``_BEAT``,
    set by ``_heartbeat``) is sent as v3 naming its instance id."""

    API_KEY = 12

    def __init__(self, group: str, generation_id: int, member_id: str) -> None:
        self._fields = (group, generation_id, member_id)
        self._beat = _BEAT.get()

    def build(self, request_struct_class: type[Any]) -> Any:
        if request_struct_class.API_VERSION < 3:  # a broker before Kafka 2.3
            return request_struct_class(*self._fields)
        if self._beat is None:  # a dynamic member: no instance id
            return request_struct_class(*self._fields, None)
        struct = request_struct_class(*self._fields, self._beat.instance_id)
        struct.RESPONSE_TYPE = self._beat  # decodes the answer and notes a fence
        return struct


class LeaveGroupResponse_v3(Response):  # type: ignore[misc]
    API_KEY = 13
    API_VERSION = 3
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("error_code", Int16),
        (
            "members",
            Array(
                ("member_id", String("utf-8")),
                ("group_instance_id", String("utf-8")),
                ("error_code", Int16),
            ),
        ),
    )


class LeaveGroupRequest_v3(RequestStruct):  # type: ignore[misc]
    API_KEY = 13
    API_VERSION = 3
    RESPONSE_TYPE = LeaveGroupResponse_v3
    SCHEMA = Schema(
        ("group_id", String("utf-8")),
        ("members", Array(("member_id", String("utf-8")), ("group_instance_id", String("utf-8")))),
    )


class StaticLeaveGroupRequest(Request[LeaveGroupRequest_v3]):  # type: ignore[misc]
    """A static member leaving its group by its instance id (Kafka 2.4 and later)."""

    API_KEY = 13

    def __init__(self, group_id: str, member_id: str, instance_id: str) -> None:
        self._group_id, self._member = group_id, (member_id, instance_id)

    def build(self, request_struct_class: type[LeaveGroupRequest_v3]) -> LeaveGroupRequest_v3:
        return request_struct_class(self._group_id, [self._member])


def _original(method: Any) -> Any:
    return getattr(method, "__wrapped__", method)


_aiokafka_heartbeat = _original(aiokafka_coordinator.GroupCoordinator._do_heartbeat)
_aiokafka_leave = _original(aiokafka_coordinator.GroupCoordinator._maybe_leave_group)


async def _heartbeat(coordinator: Any) -> bool:
    """aiokafka's heartbeat; a static member's names its instance id, and a fence ends it."""
    instance = coordinator._group_instance_id
    if instance is None:
        beat: bool = await _aiokafka_heartbeat(coordinator)
        return beat
    seen = _Beat(instance)
    token = _BEAT.set(seen)
    try:
        beat = await _aiokafka_heartbeat(coordinator)
        return beat
    except errors.KafkaError:  # aiokafka raises what it does not expect, the fence among them
        if seen.fenced:
            raise InstanceFencedError.of(coordinator.group_id, instance) from None
        raise
    finally:
        _BEAT.reset(token)


async def _leave(coordinator: Any) -> None:
    """On close, a static member leaves by its instance id (aiokafka skips that), so its
    partitions move at once; then aiokafka's own leave (a dynamic member's) and reset."""
    instance = coordinator._group_instance_id
    closing = coordinator._closing.done()
    if instance is not None and closing and coordinator.generation > 0:
        request = StaticLeaveGroupRequest(coordinator.group_id, coordinator.member_id, instance)
        try:
            response = await coordinator._send_req(request)
        except (errors.KafkaError, NotImplementedError) as error:
            log.warning("static member's LeaveGroup failed", error=repr(error))
        else:
            codes = [response.error_code, *(code for _, _, code in response.members)]
            log.info("left the group", group=coordinator.group_id, instance=instance, codes=codes)
    await _aiokafka_leave(coordinator)


_heartbeat.__wrapped__ = _aiokafka_heartbeat  # type: ignore[attr-defined]
_leave.__wrapped__ = _aiokafka_leave  # type: ignore[attr-defined]


def install() -> None:
    """Have aiokafka's sender build our handler for every TxnOffsetCommit (a producer that names
    no member still sends v0), its consumers' coordinators ask stable committed offsets, and a
    static member heartbeat and leave by its instance id (idempotent)."""
    aiokafka_sender.TxnOffsetCommitHandler = FencedTxnOffsetCommitHandler
    aiokafka_coordinator.OffsetFetchRequest = StableOffsetFetchRequest
    aiokafka_coordinator.HeartbeatRequest = StaticHeartbeatRequest
    aiokafka_coordinator.GroupCoordinator._do_heartbeat = _heartbeat
    aiokafka_coordinator.GroupCoordinator._maybe_leave_group = _leave
    errors.kafka_errors.setdefault(FencedInstanceIdError.errno, FencedInstanceIdError)


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


def _fetcher(consumer: aiokafka.AIOKafkaConsumer) -> Any:
    fetcher = getattr(consumer, "_fetcher", None)
    if fetcher is None or not isinstance(getattr(fetcher, "_fetch_max_wait_ms", None), int):
        raise RuntimeError("the consumer has no started fetcher with a fetch wait to set")
    return fetcher


def set_fetch_wait(consumer: aiokafka.AIOKafkaConsumer, wait_ms: int) -> None:
    """The fetch wait of ``consumer``'s next fetch requests (it must be started)."""
    if wait_ms <= 0:
        raise ValueError(f"a fetch wait must be positive, got {wait_ms}")
    _fetcher(consumer)._fetch_max_wait_ms = wait_ms


def fetch_wait(consumer: aiokafka.AIOKafkaConsumer) -> int:
    """The fetch wait ``consumer``'s next fetch requests carry."""
    wait: int = _fetcher(consumer)._fetch_max_wait_ms
    return wait
