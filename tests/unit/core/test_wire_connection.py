"""KafkaConnection: the HOLDEM_KAFKA_* variables every client reads."""

from __future__ import annotations

import doctest

import pytest

import holdem.core.wire.connection as connection
from holdem.core.wire.connection import ConnectionConfigError, KafkaConnection, read_env_file

SASL = {
    "HOLDEM_KAFKA_BOOTSTRAP": "127.0.0.1:1",
    "HOLDEM_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
    "HOLDEM_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
    "HOLDEM_KAFKA_SASL_USERNAME": "dealer",
    "HOLDEM_KAFKA_SASL_PASSWORD": "pw",
}


def test_docstrings_run() -> None:
    assert doctest.testmod(connection).failed == 0


def test_sasl_connection_round_trips_through_its_env() -> None:
    conn = KafkaConnection.from_env(SASL)
    assert KafkaConnection.from_env(conn.env()) == conn
    kwargs = conn.kwargs()
    assert kwargs["sasl_plain_username"] == "dealer"
    assert kwargs["sasl_plain_password"] == "pw"


def test_env_file_is_read_without_shell_expansion(tmp_path) -> None:
    path = tmp_path / "operator.env"
    path.write_text("# written by kafka.sh\n" + "\n".join(f"{k}={v}" for k, v in SASL.items()))
    assert read_env_file(path) == SASL
    assert KafkaConnection.from_file(path).username == "dealer"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"HOLDEM_KAFKA_SECURITY_PROTOCOL": "SASL_SOMETHING"}, "SECURITY_PROTOCOL"),
        ({"HOLDEM_KAFKA_SASL_MECHANISM": "GSSAPI"}, "SASL_MECHANISM"),
        ({"HOLDEM_KAFKA_SASL_PASSWORD": ""}, "SASL_PASSWORD"),
        ({"HOLDEM_KAFKA_SSL_CAFILE": "/ca.pem"}, "SSL_CAFILE"),
    ],
)
def test_an_unusable_setting_is_refused_with_its_name(change: dict[str, str], words: str) -> None:
    with pytest.raises(ConnectionConfigError, match=words):
        KafkaConnection.from_env({**SASL, **change})


def test_tls_builds_an_ssl_context() -> None:
    conn = KafkaConnection.from_env({**SASL, "HOLDEM_KAFKA_SECURITY_PROTOCOL": "SASL_SSL"})
    assert conn.kwargs()["ssl_context"] is not None


def test_a_command_reads_its_env_file_else_the_environment(tmp_path, monkeypatch) -> None:
    path = tmp_path / "auditor.env"
    path.write_text("\n".join(f"{k}={v}" for k, v in SASL.items()))
    monkeypatch.setenv("HOLDEM_KAFKA_BOOTSTRAP", "env:1")
    assert KafkaConnection.from_file_or_env(path) == KafkaConnection.from_env(SASL)
    assert KafkaConnection.from_file_or_env(None).bootstrap == "env:1"
    with pytest.raises(ConnectionConfigError, match="cannot read"):
        KafkaConnection.from_file_or_env(tmp_path / "missing.env")
