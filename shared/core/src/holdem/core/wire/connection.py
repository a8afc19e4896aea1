"""How every client of the game reaches Kafka: bootstrap, SASL SCRAM credentials and TLS, read
from the ``HOLDEM_KAFKA_*`` variables that ``kafka.sh up`` writes per principal."""

from __future__ import annotations

import contextlib
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")
PREFIX = "HOLDEM_KAFKA_"


class ConnectionConfigError(ValueError):
    """The HOLDEM_KAFKA_* settings do not describe a usable connection."""


@dataclass(frozen=True)
class KafkaConnection:
    """Where the brokers are and who we are to them.

    >>> KafkaConnection.from_env({"HOLDEM_KAFKA_BOOTSTRAP": "127.0.0.1:9092"}).kwargs()
    {'bootstrap_servers': '127.0.0.1:9092', 'security_protocol': 'PLAINTEXT'}
    >>> c = KafkaConnection.from_env({
    ...     "HOLDEM_KAFKA_BOOTSTRAP": "127.0.0.1:9092",
    ...     "HOLDEM_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
    ...     "HOLDEM_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
    ...     "HOLDEM_KAFKA_SASL_USERNAME": "operator",
    ...     "HOLDEM_KAFKA_SASL_PASSWORD": "secret",
    ... })
    >>> c.username, c.kwargs()["sasl_mechanism"]
    ('operator', 'SCRAM-SHA-512')
    >>> "secret" in repr(c)
    False
    """

    bootstrap: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None

    def __post_init__(self) -> None:
        if not self.bootstrap.strip():
            raise ConnectionConfigError(f"{PREFIX}BOOTSTRAP is empty")
        if self.security_protocol not in PROTOCOLS:
            raise ConnectionConfigError(
                f"{PREFIX}SECURITY_PROTOCOL={self.security_protocol!r}: expected one of {PROTOCOLS}"
            )
        if self.uses_sasl:
            if self.sasl_mechanism not in MECHANISMS:
                raise ConnectionConfigError(
                    f"{PREFIX}SASL_MECHANISM={self.sasl_mechanism!r}: expected one of {MECHANISMS}"
                )
            if not self.username or not self.password:
                needs = f"{PREFIX}SASL_USERNAME and {PREFIX}SASL_PASSWORD"
                raise ConnectionConfigError(f"{self.security_protocol} needs {needs}")
        if self.ssl_cafile is not None and not self.uses_tls:
            raise ConnectionConfigError(
                f"{PREFIX}SSL_CAFILE is set but {PREFIX}SECURITY_PROTOCOL={self.security_protocol}"
            )

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, bootstrap: str | None = None
    ) -> KafkaConnection:
        """From ``HOLDEM_KAFKA_*`` in ``environ`` (default: the process environment);
        ``bootstrap`` overrides ``HOLDEM_KAFKA_BOOTSTRAP``."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(PREFIX + name)
            return value if value else None

        return cls(
            bootstrap=bootstrap or get("BOOTSTRAP") or "127.0.0.1:9092",
            security_protocol=(get("SECURITY_PROTOCOL") or "PLAINTEXT").upper(),
            sasl_mechanism=get("SASL_MECHANISM"),
            username=get("SASL_USERNAME"),
            password=get("SASL_PASSWORD"),
            ssl_cafile=get("SSL_CAFILE"),
        )

    @classmethod
    def from_file(cls, path: str | Path) -> KafkaConnection:
        """From a ``KEY=VALUE`` file such as ``DIR/clients/<principal>.env`` of ``kafka.sh up``."""
        return cls.from_env(read_env_file(path))

    @classmethod
    def from_file_or_env(cls, path: str | Path | None) -> KafkaConnection:
        """A command's connection: from its ``--env-file`` if given, else from the process's
        ``HOLDEM_KAFKA_*`` variables. ``ConnectionConfigError`` for a bad setting or a file
        that cannot be read (one error for the caller's one line)."""
        if not path:
            return cls.from_env()
        try:
            return cls.from_file(path)
        except OSError as error:
            raise ConnectionConfigError(f"cannot read {path}: {error}") from error

    def with_bootstrap(self, bootstrap: str) -> KafkaConnection:
        """The same principal at another address."""
        return replace(self, bootstrap=bootstrap)

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for aiokafka's producer, consumer and admin client."""
        out: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap,
            "security_protocol": self.security_protocol,
        }
        if self.uses_sasl:
            out["sasl_mechanism"] = self.sasl_mechanism
            out["sasl_plain_username"] = self.username
            out["sasl_plain_password"] = self.password
        if self.uses_tls:
            # What aiokafka's create_ssl_context makes: TLS client, hostname and chain verified.
            out["ssl_context"] = ssl.create_default_context(cafile=self.ssl_cafile)
        return out

    def env(self) -> dict[str, str]:
        """The ``HOLDEM_KAFKA_*`` variables that describe this connection (for a child process)."""
        values = {
            "BOOTSTRAP": self.bootstrap,
            "SECURITY_PROTOCOL": self.security_protocol,
            "SASL_MECHANISM": self.sasl_mechanism,
            "SASL_USERNAME": self.username,
            "SASL_PASSWORD": self.password,
            "SSL_CAFILE": self.ssl_cafile,
        }
        return {PREFIX + k: v for k, v in values.items() if v is not None}


def as_connection(target: KafkaConnection | str) -> KafkaConnection:
    """``target`` itself, or for a bare ``host:port`` address: that address with the credentials
    of this process's ``HOLDEM_KAFKA_*`` variables.

    >>> as_connection("h:1").bootstrap
    'h:1'
    """
    if isinstance(target, KafkaConnection):
        return target
    return KafkaConnection.from_env(bootstrap=target)


def read_env_file(path: str | Path) -> dict[str, str]:
    """``KEY=VALUE`` lines; blank lines and ``#`` comments are skipped, no shell expansion."""
    out: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise ConnectionConfigError(f"{path}:{number}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


class Startable(Protocol):
    """A Kafka client (aiokafka's consumer, producer or admin): started, then stopped once."""

    async def start(self) -> None: ...
    async def stop(self) -> None: ...


async def start_or_close(client: Startable) -> None:
    """Start ``client``; if its start fails (broker away, a timeout cancelling it), stop it
    before raising: a client made and never stopped keeps its connections and sockets, and
    aiokafka warns "Unclosed AIOKafkaConsumer" when it is collected (issue 26 item 6)."""
    try:
        await client.start()
    except BaseException:
        with contextlib.suppress(Exception):
            await client.stop()
        raise
