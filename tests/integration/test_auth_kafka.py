"""Authentication and authorization on the real broker: who may connect, write and read what."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import (
    GroupAuthorizationFailedError,
    KafkaConnectionError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailed,
)
from support.kafka import Cluster
from support.kafka_io import consumer, produce, read_all, wait_for

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.ops import acl

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(120)]


def prefix_of(topics: Topics) -> str:
    return topics.commands.removesuffix(".holdem.commands")


async def connects(connection: KafkaConnection) -> None:
    producer = AIOKafkaProducer(**connection.kwargs())
    try:
        await producer.start()
    finally:
        await producer.stop()


async def test_the_cluster_holds_the_acl_set_of_the_tests_prefix(
    kafka: Cluster, topics: Topics
) -> None:
    held = set(await acl.describe(kafka.admin))
    assert set(acl.plan(prefix_of(topics))) <= held
    with pytest.raises(acl.AclError):  # only admin may change the rules
        await acl.apply(kafka.operator, acl.plan("elsewhere"))


async def test_a_client_without_credentials_is_refused(kafka: Cluster) -> None:
    with pytest.raises(KafkaConnectionError):
        await connects(KafkaConnection(kafka.bootstrap))
    await connects(kafka.operator)  # the same broker answers those it knows


async def test_a_wrong_password_is_refused(
    kafka: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="aiokafka")
    with pytest.raises(KafkaConnectionError):
        await connects(replace(kafka.operator, password="not-the-password"))
    assert "SaslAuthenticationFailed" in caplog.text


async def test_the_operator_writes_commands_and_reads_rounds_wallet_and_rejected(
    kafka: Cluster, topics: Topics
) -> None:
    await produce(kafka.operator, topics.commands, "p1", b"command")
    for topic in (topics.rounds, topics.wallet, topics.rejected):
        await produce(kafka.admin, topic, "p1", topic.encode())
        assert [r.value for r in await read_all(kafka.operator, topic)] == [topic.encode()]
    assert [r.value for r in await read_all(kafka.admin, topics.commands)] == [b"command"]


async def test_the_operator_consumes_in_groups_under_its_own_prefix_only(
    kafka: Cluster, topics: Topics
) -> None:
    await produce(kafka.admin, topics.rounds, "p1", b"event")
    own = f"{prefix_of(topics)}.holdem-operator-live"
    async with consumer(kafka.operator, topics.rounds, group_id=own) as reader:
        assert (await reader.getone()).value == b"event"
        await reader.commit()
    service_group = f"{prefix_of(topics)}.holdem-wallet"
    with pytest.raises(GroupAuthorizationFailedError):
        async with consumer(kafka.operator, topics.rounds, group_id=service_group) as reader:
            await reader.getone()


@pytest.mark.parametrize("role", ["rounds", "wallet", "vault", "rejected", "replies"])
async def test_the_operator_cannot_write_internal_topics(
    kafka: Cluster, topics: Topics, role: str
) -> None:
    with pytest.raises(TopicAuthorizationFailedError):
        await produce(kafka.operator, getattr(topics, role), "p1", b"forged")


@pytest.mark.parametrize("who", ["operator", "wallet", "settlement", "query", "backoffice"])
async def test_nobody_but_the_dealer_reads_the_vault(
    kafka: Cluster, topics: Topics, who: str
) -> None:
    await produce(kafka.admin, topics.vault, "p1", b"deck and salt")
    with pytest.raises(TopicAuthorizationFailedError):
        await read_all(kafka.connection(who), topics.vault)
    records = await read_all(kafka.connection("dealer"), topics.vault)
    assert [r.value for r in records] == [b"deck and salt"]


@pytest.mark.parametrize(
    ("who", "role"),
    [
        ("settlement", "wallet"),
        ("settlement", "vault"),
        ("settlement", "commands"),
        ("wallet", "vault"),
        ("wallet", "commands"),
        ("dealer", "wallet"),
        ("dealer", "commands"),
        ("query", "rounds"),
        ("query", "wallet"),
        ("query", "commands"),
        ("dealer", "replies"),
        ("backoffice", "rounds"),
        ("backoffice", "wallet"),
        ("backoffice", "commands"),
    ],
)
async def test_a_service_cannot_write_a_topic_it_does_not_own(
    kafka: Cluster, topics: Topics, who: str, role: str
) -> None:
    with pytest.raises(TopicAuthorizationFailedError):
        await produce(kafka.connection(who), getattr(topics, role), "p1", b"forged")


@pytest.mark.parametrize(
    ("who", "role"),
    [
        ("dealer", "vault"),
        ("dealer", "rounds"),
        ("wallet", "wallet"),
        ("settlement", "rounds"),
        ("query", "replies"),
        ("operator", "queries"),
    ],
)
async def test_a_service_writes_the_topics_it_owns(
    kafka: Cluster, topics: Topics, who: str, role: str
) -> None:
    await produce(kafka.connection(who), getattr(topics, role), "p1", b"own")
    assert [r.value for r in await read_all(kafka.admin, getattr(topics, role))] == [b"own"]


@pytest.mark.parametrize("role", acl.BACKOFFICE_READS)  # the plan the tests apply: not seamless
async def test_the_back_office_reads_the_topics_it_projects(
    kafka: Cluster, topics: Topics, role: str
) -> None:
    topic = getattr(topics, role)
    await produce(kafka.admin, topic, "p1", b"projected")
    assert [r.value for r in await read_all(kafka.connection("backoffice"), topic)] == [
        b"projected"
    ]


async def test_the_back_office_may_not_read_commands_or_join_a_group(
    kafka: Cluster, topics: Topics
) -> None:
    with pytest.raises(TopicAuthorizationFailedError):
        await read_all(kafka.connection("backoffice"), topics.commands)
    with pytest.raises(GroupAuthorizationFailedError):
        group = f"{prefix_of(topics)}.holdem-backoffice"
        async with consumer(kafka.connection("backoffice"), topics.rounds, group_id=group) as r:
            await r.getone()


async def test_a_transactional_id_outside_the_principals_prefix_is_refused(
    kafka: Cluster, topics: Topics
) -> None:
    scope = f"{prefix_of(topics)}."
    foreign = AIOKafkaProducer(
        **kafka.connection("settlement").kwargs(), transactional_id=f"{scope}holdem-wallet-0"
    )
    with pytest.raises(TransactionalIdAuthorizationFailed):
        try:
            await foreign.start()
        finally:
            await foreign.stop()
    own = AIOKafkaProducer(
        **kafka.connection("settlement").kwargs(), transactional_id=f"{scope}holdem-settlement-0"
    )
    await own.start()
    try:
        async with own.transaction():
            await own.send(topics.rounds, b"in a transaction", key=b"p1")
    finally:
        await own.stop()

    async def committed() -> bool:
        # The commit returns a moment before its markers are written (see test_kafka_smoke).
        records = await read_all(kafka.admin, topics.rounds)
        return [r.value for r in records] == [b"in a transaction"]

    await wait_for(committed, timeout=30.0)


async def test_the_operator_reads_replies_and_the_query_service_reads_queries(
    kafka: Cluster, topics: Topics
) -> None:
    await produce(kafka.operator, topics.queries, "p1", b"query")
    assert [r.value for r in await read_all(kafka.connection("query"), topics.queries)] == [
        b"query"
    ]
    await produce(kafka.connection("query"), topics.replies, "r1", b"reply")
    assert [r.value for r in await read_all(kafka.operator, topics.replies)] == [b"reply"]
    with pytest.raises(TopicAuthorizationFailedError):
        await read_all(kafka.connection("wallet"), topics.queries)
