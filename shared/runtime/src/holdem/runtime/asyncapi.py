"""The AsyncAPI document of a service's channels, generated at build time by faststream
(``make contracts`` writes docs/contracts/asyncapi/): what it consumes and publishes. This is
faststream's one job here (ADR 023); no service process imports this module (import-linter).
The KafkaBroker only describes the channels: it is never started, nothing subscribes to it."""

from __future__ import annotations

from typing import Any

from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.specification import AsyncAPI

from holdem.core.contracts.records import UNIONS
from holdem.runtime.processor import Spec
from holdem.runtime.settings import RuntimeSettings


def describe(spec: Spec[Any], settings: RuntimeSettings) -> AsyncAPI:
    """The service's AsyncAPI document (its servers: ``settings.connection``'s hosts)."""
    broker = KafkaBroker(
        settings.connection.bootstrap.split(","),  # faststream takes a str as one host
        client_id=f"holdem-{spec.name}",
    )
    topics = settings.topics
    subscriber = broker.subscriber(
        *(getattr(topics, role) for role in spec.inputs),
        group_id=f"holdem-{spec.name}",
        title=f"holdem-{spec.name}",
        description="consumes the roles "
        + ", ".join(spec.inputs)
        + "; payloads are the unions published on those topics (see the other channels)",
    )
    subscriber(_consumes)
    for role in (*spec.outputs, "rejected"):
        broker.publisher(
            getattr(topics, role),
            schema=UNIONS[role],
            title=f"holdem-{spec.name}:{role}",
            description=f"what {spec.name} publishes on the {role} topic, keyed by "
            + ("table_id" if role == "tables" else "player_id"),
        )
    return AsyncAPI(broker, title=f"holdem-{spec.name}", version="1.0.0")


def document(spec: Spec[Any], settings: RuntimeSettings) -> str:
    """The document as JSON text."""
    return describe(spec, settings).to_specification().to_json()


async def _consumes(message: KafkaMessage) -> None:
    """The described subscriber's handler: the document needs one; nothing calls it."""
