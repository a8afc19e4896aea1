"""Settings every service shares (Kafka, topics, metrics, logging), read from HOLDEM_* env vars."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from holdem.runtime.topics import Topics


class RuntimeSettings(BaseSettings):
    """Base of each service's settings class; nothing is read until it is instantiated."""

    model_config = SettingsConfigDict(env_prefix="HOLDEM_", extra="ignore")

    kafka_bootstrap: str = Field(
        default="127.0.0.1:9092", description="Kafka bootstrap servers, host:port[,host:port]"
    )
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
    metrics_port: int = Field(
        default=0, ge=0, le=65535, description="Port of the Prometheus /metrics endpoint; 0 = off"
    )
    log_level: str = Field(default="INFO", description="structlog level")
    publish_retries: int = Field(
        default=5, ge=0, description="Attempts to publish one decision before the service gives up"
    )

    @property
    def topics(self) -> Topics:
        return Topics().with_prefix(self.topic_prefix) if self.topic_prefix else Topics()
