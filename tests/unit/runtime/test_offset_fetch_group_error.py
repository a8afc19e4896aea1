"""Issue 26: OffsetFetch v7's group-level error is every asked partition's, never "no offset".

A restarted broker still loading its groups answers an OffsetFetch (v2 and later) with its own
error code (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR) and no partitions. aiokafka reads only
the partitions, so it took that for "no committed offset" and the member would have started
over from the earliest offset. Each test encodes the broker's answer as bytes, decodes it the way
aiokafka's connection does (the sent struct's RESPONSE_TYPE) and hands it to aiokafka's own
coordinator code."""

from __future__ import annotations

import io
from typing import Any

import aiokafka.errors as errors
import pytest
from aiokafka import TopicPartition
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.structs import OffsetAndMetadata

from holdem.runtime.kafka_internals import OffsetFetchResponse_v7, StableOffsetFetchRequest

TOPIC = "holdem.commands"
ASKED = [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 14, 15, 16
GROUP_AUTHORIZATION_FAILED, UNSTABLE_OFFSET_COMMIT = 30, 88


def answer(error_code: int, partitions: tuple[tuple[int, int, int], ...] = ()) -> bytes:
    """The broker's bytes: its group error code and (partition, offset, error code) rows."""
    rows: list[Any] = [(p, offset, -1, "", code, {}) for p, offset, code in partitions]
    topics: list[Any] = [(TOPIC, rows, {})] if rows else []
    return bytes(OffsetFetchResponse_v7(0, topics, error_code, {}).encode())


class Coordinator:
    """Just what aiokafka's ``fetch_committed_offsets`` reads of its coordinator: each request
    is built and its answer decoded as aiokafka's connection does."""

    def __init__(self, *answers: bytes) -> None:
        self.answers = list(answers)
        self.group_id = "holdem-wallet"
        self.coordinator_id = 1
        self._retry_backoff_ms = 1
        self.dead = 0

    async def ensure_coordinator_known(self) -> None:
        return None

    def coordinator_dead(self) -> None:
        self.dead += 1

    async def _send_req(self, request: StableOffsetFetchRequest) -> Any:
        struct = request.prepare({9: (0, 8)})
        assert struct.API_VERSION == 7 and struct.require_stable
        return struct.RESPONSE_TYPE.decode(io.BytesIO(self.answers.pop(0)))

    async def _do_fetch_commit_offsets(self, partitions: list[TopicPartition]) -> Any:
        return await GroupCoordinator._do_fetch_commit_offsets(self, partitions)

    async def fetch(self) -> dict[TopicPartition, OffsetAndMetadata]:
        found: dict[
            TopicPartition, OffsetAndMetadata
        ] = await GroupCoordinator.fetch_committed_offsets(self, ASKED)
        return found


@pytest.fixture(autouse=True)
def stable_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """aiokafka's coordinator module builds our request, as ``install()`` has it do."""
    from aiokafka.consumer import group_coordinator

    monkeypatch.setattr(group_coordinator, "OffsetFetchRequest", StableOffsetFetchRequest)


COMMITTED = answer(0, ((0, 42, 0), (1, 7, 0)))
OFFSETS = {ASKED[0]: OffsetAndMetadata(42, ""), ASKED[1]: OffsetAndMetadata(7, "")}


async def test_a_group_still_loading_is_asked_again_not_read_as_no_offset() -> None:
    coordinator = Coordinator(answer(COORDINATOR_LOAD_IN_PROGRESS), COMMITTED)
    assert await coordinator.fetch() == OFFSETS
    assert coordinator.answers == []  # the loading answer was retried, then the offsets read


@pytest.mark.parametrize("code", [NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE])
async def test_a_moved_or_absent_coordinator_is_found_again_and_asked_again(code: int) -> None:
    coordinator = Coordinator(answer(code), COMMITTED)
    assert await coordinator.fetch() == OFFSETS
    assert coordinator.dead == 1  # aiokafka looks the coordinator up again


async def test_any_other_group_error_is_raised() -> None:
    coordinator = Coordinator(answer(GROUP_AUTHORIZATION_FAILED))
    with pytest.raises(errors.GroupAuthorizationFailedError):
        await coordinator.fetch()


async def test_every_asked_partition_carries_the_group_error() -> None:
    request = StableOffsetFetchRequest("holdem-wallet", [(TOPIC, [0, 1])])
    struct = request.prepare({9: (0, 8)})
    decoded = struct.RESPONSE_TYPE.decode(io.BytesIO(answer(COORDINATOR_LOAD_IN_PROGRESS)))
    assert decoded.topics == [(TOPIC, [(0, -1, "", 14), (1, -1, "", 14)])]


async def test_an_unstable_partition_reads_as_loading_and_no_offset_stays_none() -> None:
    unstable = answer(0, ((0, 42, UNSTABLE_OFFSET_COMMIT), (1, 7, 0)))
    none_yet = answer(0, ((0, 42, 0), (1, -1, 0)))
    coordinator = Coordinator(unstable, none_yet)
    assert await coordinator.fetch() == {ASKED[0]: OffsetAndMetadata(42, "")}
