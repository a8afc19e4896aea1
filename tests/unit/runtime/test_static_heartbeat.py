"""Static membership's heartbeat and leave (ADR 037), through aiokafka's own heartbeat code.

The broker's answer is encoded as bytes and decoded as aiokafka's connection does (the sent
struct's RESPONSE_TYPE); aiokafka's ``_do_heartbeat`` reads it. A static member's heartbeat
names its instance id (v3), and a FENCED_INSTANCE_ID answer ends the member with the one line
that says why; a dynamic member's heartbeat is aiokafka's, unchanged."""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest
from aiokafka.protocol.group import HeartbeatResponse_v1

from holdem.runtime import kafka_internals
from holdem.runtime.kafka_internals import (
    InstanceFencedError,
    LeaveGroupRequest_v3,
    StaticLeaveGroupRequest,
)
from holdem.runtime.outbox import FatalError

VERSIONS = {12: (0, 4), 13: (0, 5)}  # the broker's Heartbeat and LeaveGroup versions
FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS = 82, 27


class Coordinator:
    """What aiokafka's ``_do_heartbeat`` reads of its coordinator."""

    def __init__(self, instance_id: str | None, error_code: int) -> None:
        self._group_instance_id = instance_id
        self.error_code = error_code
        self.group_id, self.generation, self.member_id = "holdem-wallet", 4, "wallet-0-abc"
        self.coordinator_id = 1
        self.sent: list[Any] = []
        self.rejoins = 0

    async def _send_req(self, request: Any) -> Any:
        struct = request.prepare(VERSIONS)
        self.sent.append(struct)
        answer = bytes(HeartbeatResponse_v1(0, self.error_code).encode())
        return struct.RESPONSE_TYPE.decode(io.BytesIO(answer))

    def request_rejoin(self) -> None:
        self.rejoins += 1

    def coordinator_dead(self) -> None: ...

    def reset_generation(self) -> None: ...


@pytest.fixture(autouse=True)
def installed() -> None:
    kafka_internals.install()


async def test_a_static_members_heartbeat_names_its_instance_id() -> None:
    coordinator = Coordinator("0", 0)
    assert await kafka_internals._heartbeat(coordinator) is True
    (sent,) = coordinator.sent
    assert sent.API_VERSION == 3
    assert sent.group_instance_id == "0" and sent.member_id == "wallet-0-abc"


async def test_a_fenced_static_member_ends_saying_why() -> None:
    coordinator = Coordinator("0", FENCED_INSTANCE_ID)
    with pytest.raises(InstanceFencedError) as raised:
        await kafka_internals._heartbeat(coordinator)
    assert "fenced: another process joined the group with this HOLDEM_INSTANCE_ID" in str(
        raised.value
    )
    assert isinstance(raised.value, FatalError)  # the loop ends the process: status 70
    # aiokafka hands the error to the consumer as a copy: it must keep its message.
    assert str(copy.copy(raised.value)) == str(raised.value)


async def test_other_answers_are_aiokafkas_to_handle() -> None:
    coordinator = Coordinator("0", REBALANCE_IN_PROGRESS)
    assert await kafka_internals._heartbeat(coordinator) is True  # aiokafka: rejoin, go on
    assert coordinator.rejoins == 1


async def test_a_dynamic_members_heartbeat_names_no_instance() -> None:
    coordinator = Coordinator(None, 0)
    assert await kafka_internals._heartbeat(coordinator) is True
    (sent,) = coordinator.sent
    assert sent.API_VERSION == 3 and sent.group_instance_id is None


async def test_a_broker_before_static_membership_gets_aiokafkas_heartbeat() -> None:
    coordinator = Coordinator(None, 0)
    old = {**VERSIONS, 12: (0, 1)}
    coordinator._send_req = lambda request: _answer(request.prepare(old), coordinator.sent)  # type: ignore[method-assign]
    assert await kafka_internals._heartbeat(coordinator) is True
    (sent,) = coordinator.sent
    assert sent.API_VERSION == 1


async def _answer(struct: Any, sent: list[Any]) -> Any:
    sent.append(struct)
    answer = bytes(HeartbeatResponse_v1(0, 0).encode())
    return struct.RESPONSE_TYPE.decode(io.BytesIO(answer))


def test_a_static_member_leaves_by_its_instance_id() -> None:
    struct = StaticLeaveGroupRequest("holdem-wallet", "wallet-0-abc", "0").prepare(VERSIONS)
    assert isinstance(struct, LeaveGroupRequest_v3)
    assert struct.members == [("wallet-0-abc", "0")]
    assert LeaveGroupRequest_v3.decode(io.BytesIO(struct.encode())).members == [
        ("wallet-0-abc", "0")
    ]
