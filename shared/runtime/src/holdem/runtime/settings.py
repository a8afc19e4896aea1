"""Settings every service shares (Kafka, topics, metrics, logging), read from HOLDEM_* env vars."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics


class RuntimeSettings(BaseSettings):
    """Base of each service's settings class; nothing is read until it is instantiated."""

    model_config = SettingsConfigDict(env_prefix="HOLDEM_", extra="ignore")

    kafka_bootstrap: str = Field(
        default="127.0.0.1:9092", description="Kafka bootstrap servers, host:port[,host:port]"
    )
    # The HOLDEM_KAFKA_* variables of the service's principal (kafka.sh's clients/<name>.env).
    kafka_security_protocol: str = Field(
        default="PLAINTEXT", description="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
    )
    kafka_sasl_mechanism: str | None = Field(default=None, description="SCRAM-SHA-512 (SASL_*)")
    kafka_sasl_username: str | None = Field(default=None, description="the service's principal")
    kafka_sasl_password: SecretStr | None = Field(default=None, description="its password")
    kafka_ssl_cafile: str | None = Field(default=None, description="CA file (SSL, SASL_SSL)")
    topic_prefix: str = Field(
        default="", description="Prefix for every topic name (tenants, tests); empty = defaults"
    )
    partitions: int = Field(
        default=3, ge=1, le=1024, description="Partition count of every topic (co-partitioning)"
    )
    instance_id: str = Field(
        default="0",
        description="Stable id of this instance; part of the transactional id, so a restarted "
        "instance fences its predecessor's unfinished transactions",
    )
    static_membership: bool = Field(
        default=True,
        description="Join the consumer group as the static member instance_id (KIP-345, ADR "
        "037): a restart within the session timeout takes its partitions back with no "
        "rebalance, and a second process with the same id is fenced by the broker",
    )
    session_timeout_ms: int = Field(
        default=6_000,
        ge=6_000,
        le=1_800_000,
        description="How long the group waits for a member that stopped heartbeating (a kill "
        "-9) before its partitions move; the broker's minimum is 6 s",
    )
    metrics_port: int = Field(
        default=0, ge=0, le=65535, description="Port of the Prometheus /metrics endpoint; 0 = off"
    )
    metrics_host: str = Field(
        default="0.0.0.0",
        description="Address /metrics listens on: every interface (a container's, published on "
        "the host's loopback by compose); `make serve` sets 127.0.0.1",
    )
    snapshot_interval_s: float = Field(
        default=30.0,
        ge=0,
        description="How often each partition's state is snapshotted (0: never; restarts then "
        "replay the whole log)",
    )
    snapshot_compression: Literal["none", "zlib"] = Field(
        default="none",
        description="How snapshot records are written (ADR 048): none, the state as a JSON "
        "string (format 1, read by every release), or zlib, compressed (format 3, a fraction "
        "of the bytes; read since this release: set it once no instance of an older one runs)",
    )
    twin_check_s: float = Field(
        default=20.0,
        gt=0,
        description="How often the twin watch lists the group for another live member with this "
        "instance's id (ADR 034)",
    )
    log_level: str = Field(default="INFO", description="structlog level")
    publish_retries: int = Field(
        default=5, ge=0, description="Attempts to publish one decision before the service gives up"
    )

    @property
    def connection(self) -> KafkaConnection:
        """How this service reaches Kafka, as which principal."""
        password = self.kafka_sasl_password
        return KafkaConnection(
            bootstrap=self.kafka_bootstrap,
            security_protocol=self.kafka_security_protocol.upper(),
            sasl_mechanism=self.kafka_sasl_mechanism,
            username=self.kafka_sasl_username,
            password=password.get_secret_value() if password is not None else None,
            ssl_cafile=self.kafka_ssl_cafile,
        )

    @property
    def tenant(self) -> str:
        """The operator this deployment serves: its topic prefix (holdem.ops.tenants)."""
        return operator_of_prefix(self.topic_prefix)

    @property
    def operator(self) -> str:
        """The ``operator`` header of every record this deployment publishes, and the one a
        command must name if it names one (ADR 021): the tenant."""
        return self.tenant

    @property
    def topics(self) -> Topics:
        return Topics().with_prefix(self.topic_prefix) if self.topic_prefix else Topics()
