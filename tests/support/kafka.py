"""A Kafka cluster for the tests, with authentication and ACLs on: KAFKA_BOOTSTRAP_SERVERS (plus
the principals' env files in HOLDEM_KAFKA_CLIENTS_DIR), else with HOLDEM_TEST_BROKER=container a
Kafka container (testcontainers; the compose stack's image and start script), else
deploy/kafka/kafka.sh's jars."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import os
import secrets
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from holdem.core.wire.connection import PREFIX, KafkaConnection
from holdem.ops import acl
from holdem.ops.broker import LaunchError, LocalBroker, read_principals

CLIENTS_DIR_ENV = f"{PREFIX}CLIENTS_DIR"
BROKER_ENV = "HOLDEM_TEST_BROKER"  # "container": the suite's broker is a Kafka container
REPO = Path(__file__).resolve().parents[2]
CONTAINER_READY_S = 180


class BrokerUnavailableError(RuntimeError):
    """No broker could be found or started: Kafka tests fail rather than skip."""


@dataclass(frozen=True)
class Cluster:
    """A broker and how each principal reaches it: tests act as ``operator``, the services as
    themselves, set-up (topics, ACLs) and whole-log reads (the vault) as ``admin``."""

    bootstrap: str
    principals: Mapping[str, KafkaConnection]

    def connection(self, principal: str) -> KafkaConnection:
        return self.principals[principal]

    @property
    def admin(self) -> KafkaConnection:
        return self.principals["admin"]

    @property
    def operator(self) -> KafkaConnection:
        return self.principals["operator"]

    async def authorize(self, prefix: str, *, seamless: bool = False) -> None:
        """Grant the game's ACL set for the topics under ``prefix`` (a test's unique one)."""
        await acl.apply(self.admin, acl.plan(prefix, seamless=seamless))

    def settings(self, principal: str) -> dict[str, object]:
        """RuntimeSettings keyword arguments that make a service connect as ``principal``."""
        c = self.connection(principal)
        return {
            "kafka_bootstrap": c.bootstrap,
            "kafka_security_protocol": c.security_protocol,
            "kafka_sasl_mechanism": c.sasl_mechanism,
            "kafka_sasl_username": c.username,
            "kafka_sasl_password": c.password,
            "kafka_ssl_cafile": c.ssl_cafile,
        }


@contextlib.contextmanager
def local_broker(*, tls: bool = False) -> Iterator[Cluster]:
    """kafka.sh up in a temporary run dir; always brought down and removed after."""
    broker = LocalBroker(tls=tls)
    try:
        try:
            bootstrap = broker.up()
        except LaunchError as exc:
            raise BrokerUnavailableError(str(exc)) from exc
        yield Cluster(bootstrap, broker.principals())
    finally:
        broker.down()


@contextlib.contextmanager
def external_broker(bootstrap: str) -> Iterator[Cluster]:
    """KAFKA_BOOTSTRAP_SERVERS: a running cluster whose principals' env files (admin, dealer,
    wallet, settlement, query, operator, as ``kafka.sh up`` writes them) are in the directory
    HOLDEM_KAFKA_CLIENTS_DIR names."""
    clients = os.environ.get(CLIENTS_DIR_ENV)
    if not clients:
        raise BrokerUnavailableError(
            f"KAFKA_BOOTSTRAP_SERVERS={bootstrap} needs {CLIENTS_DIR_ENV}: a dir with "
            f"<principal>.env for {', '.join(acl.PRINCIPALS)}"
        )
    try:
        found = read_principals(Path(clients))
    except (LaunchError, OSError, ValueError) as exc:
        raise BrokerUnavailableError(str(exc)) from exc
    yield Cluster(bootstrap, {name: c.with_bootstrap(bootstrap) for name, c in found.items()})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _answers(connection: KafkaConnection) -> bool:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.errors import KafkaError

    admin = AIOKafkaAdminClient(**connection.kwargs(), request_timeout_ms=5000)
    try:
        await admin.start()
        await admin.list_topics()
        return True
    except (KafkaError, OSError):
        return False
    finally:
        await admin.close()


@contextlib.contextmanager
def container_broker() -> Iterator[Cluster]:
    """The compose stack's Kafka as two containers (testcontainers): its controller and its broker
    (ADR 042), of the stack's image (HOLDEM_KAFKA_IMAGE, else apache/kafka:4.4.0) and start
    script, so SCRAM users, the authorizer and deny-by-default are the stack's; the broker
    published on a free port of 127.0.0.1; both removed with their network and the controller's
    volume after."""
    import docker  # type: ignore[import-untyped]
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.network import Network

    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # its image needs a registry
    image = os.environ.get("HOLDEM_KAFKA_IMAGE", "apache/kafka:4.4.0")
    port = _free_port()
    passwords = {p: secrets.token_hex(12) for p in ("broker", *acl.PRINCIPALS)}
    script = str(REPO / "deploy" / "compose" / "kafka-start.sh")
    # The controller's storage: a named volume (it takes the image's owner of the data folder),
    # read-only in the broker's container for its registration lines.
    volume = f"holdemtest-controller-{uuid.uuid4().hex[:8]}"
    envs = {
        "CLUSTER_ID": base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("="),
        **{f"HOLDEM_{p.upper()}_PASSWORD": pw for p, pw in passwords.items()},
    }

    def kafka(role: str, hostname: str) -> DockerContainer:
        return DockerContainer(
            image, entrypoint=["/bin/bash", "/holdem/kafka-start.sh", role], hostname=hostname
        ).with_volume_mapping(script, "/holdem/kafka-start.sh", "ro")

    controller = (
        kafka("controller", "kafka-controller")
        .with_network_aliases("kafka-controller")
        .with_volume_mapping(volume, "/var/lib/kafka/data", "rw")
        .with_envs(**envs, KAFKA_HEAP_OPTS="-Xms64m -Xmx192m")
    )
    container = (
        kafka("broker", "kafka")
        .with_network_aliases("kafka")
        .with_volume_mapping(volume, "/holdem/controller", "ro")
        .with_envs(
            **envs,
            KAFKA_HEAP_OPTS="-Xms256m -Xmx512m",
            HOLDEM_KAFKA_REGISTRATIONS="/holdem/controller/registrations.log",
            HOLDEM_KAFKA_EXTERNAL=f"127.0.0.1:{port}",
        )
    )
    try:
        network = Network().create()
    except Exception as exc:  # docker's errors: no engine, no permission
        raise BrokerUnavailableError(f"no Docker engine for the Kafka container: {exc}") from exc
    # Published on loopback only (with_bind_ports takes no address; docker's create does).
    container.ports["29092/tcp"] = ("127.0.0.1", port)  # type: ignore[assignment]
    started: list[DockerContainer] = []
    try:
        try:
            for one in (controller, container):
                one.with_network(network).start()
                started.append(one)
        except Exception as exc:
            raise BrokerUnavailableError(f"the Kafka containers did not start: {exc}") from exc
        bootstrap = f"127.0.0.1:{port}"
        principals = {
            name: KafkaConnection(
                bootstrap=bootstrap,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="SCRAM-SHA-512",
                username=name,
                password=passwords[name],
            )
            for name in acl.PRINCIPALS
        }
        deadline = time.monotonic() + CONTAINER_READY_S
        # In a thread of its own: this may run while the tests' event loop is running.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            answers = lambda: pool.submit(asyncio.run, _answers(principals["admin"])).result()  # noqa: E731
            while not answers():
                if time.monotonic() > deadline:
                    tails = []
                    for one in started:
                        out, err = one.get_logs()
                        tails.append((out + err).decode(errors="replace")[-3000:])
                    raise BrokerUnavailableError(
                        "the Kafka containers did not answer:\n" + "\n----\n".join(tails)
                    )
                time.sleep(1)
        yield Cluster(bootstrap, principals)
    finally:
        # A container that never started has nothing to stop; make test fails on any left over.
        # The broker first: its controlled shutdown asks the controller.
        for one in reversed(started):
            with contextlib.suppress(Exception):
                one.stop()
        network.remove()
        with contextlib.suppress(Exception):
            docker.from_env().volumes.get(volume).remove(force=True)


@contextlib.contextmanager
def kafka_broker() -> Iterator[Cluster]:
    """A reachable cluster with authentication on: the one KAFKA_BOOTSTRAP_SERVERS names, else a
    local one from the jars (ADR 001; the first design's Docker broker is gone: it had no SASL
    set-up)."""
    if bootstrap := os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        with external_broker(bootstrap) as cluster:
            yield cluster
        return
    if os.environ.get(BROKER_ENV) == "container":
        with container_broker() as cluster:
            yield cluster
        return
    with local_broker() as cluster:
        yield cluster
