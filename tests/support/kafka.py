"""A Kafka cluster for the tests, with authentication and ACLs on: KAFKA_BOOTSTRAP_SERVERS (plus
the principals' env files in HOLDEM_KAFKA_CLIENTS_DIR), else deploy/kafka/kafka.sh's jars."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from holdem.core.wire.connection import PREFIX, KafkaConnection
from holdem.ops import acl
from holdem.ops.broker import LaunchError, LocalBroker, read_principals

CLIENTS_DIR_ENV = f"{PREFIX}CLIENTS_DIR"


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


@contextlib.contextmanager
def kafka_broker() -> Iterator[Cluster]:
    """A reachable cluster with authentication on: the one KAFKA_BOOTSTRAP_SERVERS names, else a
    local one from the jars (the Docker way of DESIGN.md is gone: it had no SASL set-up)."""
    if bootstrap := os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        with external_broker(bootstrap) as cluster:
            yield cluster
        return
    with local_broker() as cluster:
        yield cluster
