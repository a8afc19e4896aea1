"""The test broker: KAFKA_BOOTSTRAP_SERVERS with its principals' env files, else the local jars;
a missing broker or missing credentials fail instead of skipping."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import kafka

from holdem.ops import acl

ENV = """HOLDEM_KAFKA_BOOTSTRAP=127.0.0.1:1
HOLDEM_KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT
HOLDEM_KAFKA_SASL_MECHANISM=SCRAM-SHA-512
HOLDEM_KAFKA_SASL_USERNAME={name}
HOLDEM_KAFKA_SASL_PASSWORD=pw-{name}
"""


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []

    @contextlib.contextmanager
    def local(*, tls: bool = False) -> Iterator[kafka.Cluster]:
        seen.append("start local")
        try:
            yield kafka.Cluster("local:9092", {})
        finally:
            seen.append("stop local")

    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.delenv(kafka.CLIENTS_DIR_ENV, raising=False)
    monkeypatch.setattr(kafka, "local_broker", local)
    return seen


def clients_dir(tmp_path: Path, principals: tuple[str, ...] = acl.PRINCIPALS) -> Path:
    for name in principals:
        (tmp_path / f"{name}.env").write_text(ENV.format(name=name))
    return tmp_path


def test_the_environment_variable_wins_with_the_principals_of_the_clients_dir(
    calls: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "broker.example:9092")
    monkeypatch.setenv(kafka.CLIENTS_DIR_ENV, str(clients_dir(tmp_path)))
    with kafka.kafka_broker() as cluster:
        assert cluster.bootstrap == "broker.example:9092"
        assert cluster.operator.username == "operator"
        assert cluster.operator.bootstrap == "broker.example:9092"  # the variable wins
        assert cluster.admin.password == "pw-admin"
    assert calls == []


def test_an_outside_broker_without_credentials_is_no_broker(
    calls: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "broker.example:9092")
    no_dir = pytest.raises(kafka.BrokerUnavailableError, match="HOLDEM_KAFKA_CLIENTS_DIR")
    with no_dir, kafka.kafka_broker():
        pass
    monkeypatch.setenv(kafka.CLIENTS_DIR_ENV, str(clients_dir(tmp_path, ("admin",))))
    with pytest.raises(kafka.BrokerUnavailableError, match="operator"), kafka.kafka_broker():
        pass


def test_the_local_broker_is_the_default_and_is_stopped_after_a_failure(
    calls: list[str],
) -> None:
    with pytest.raises(AssertionError), kafka.kafka_broker() as cluster:
        assert cluster.bootstrap == "local:9092"
        raise AssertionError("a failing test")
    assert calls == ["start local", "stop local"]


def test_services_get_their_own_principal_as_settings(tmp_path: Path) -> None:
    from holdem.ops.broker import read_principals
    from holdem.runtime.settings import RuntimeSettings

    cluster = kafka.Cluster("127.0.0.1:1", read_principals(clients_dir(tmp_path)))
    settings = RuntimeSettings(**cluster.settings("dealer"))  # type: ignore[arg-type]
    assert settings.connection == cluster.connection("dealer")
