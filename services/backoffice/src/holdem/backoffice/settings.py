"""The back office's settings: one class, ``HOLDEM_BACKOFFICE_`` environment prefix."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class BackofficeSettings(BaseSettings):
    """What the projection and the web back office read; Kafka's connection is the
    ``HOLDEM_KAFKA_*`` variables every client of the game reads (``KafkaConnection``)."""

    model_config = SettingsConfigDict(env_prefix="HOLDEM_BACKOFFICE_", extra="ignore")

    dsn: str = Field(
        default="postgresql://postgres@127.0.0.1:5432/holdem",
        description="PostgreSQL conninfo (psycopg 3) of the reporting database",
    )
    topic_prefix: str = Field(
        default="", description="the game's topics' prefix (a tenant's id), as HOLDEM_TOPIC_PREFIX"
    )
    operator_id: str = Field(
        default="",
        description="operator of records without an operator header; empty: the topic prefix"
        " ('default' without one)",
    )
    kafka_env_file: str | None = Field(
        default=None,
        description="a KEY=VALUE file of HOLDEM_KAFKA_* (e.g. clients/admin.env); else the env",
    )
    max_records: int = Field(
        default=2000, ge=1, description="records per poll (one DB transaction)"
    )
    poll_ms: int = Field(default=200, ge=1, description="how long one poll waits for records")
    metrics_port: int = Field(default=9105, ge=0, description="Prometheus /metrics port; 0: none")
    metrics_host: str = Field(
        default="0.0.0.0", description="/metrics' address (every interface: a container's)"
    )
    host: str = Field(default="127.0.0.1", description="the web back office's address")
    port: int = Field(default=8080, ge=0, le=65535, description="the web back office's port")
    session_secret: str = Field(
        default="", description="key signing the login cookie; empty: a random one per start"
    )
    big_win_amount: int = Field(
        default=4_000_000, ge=0, description="flag a round returning more than this (minor units)"
    )
    big_win_multiple: int = Field(
        default=350, ge=1, description="flag a round returning more than this many times its stake"
    )

    def operator(self) -> str:
        return self.operator_id or self.topic_prefix or "default"
