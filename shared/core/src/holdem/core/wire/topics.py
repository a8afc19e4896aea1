"""The game's Kafka topics: their roles, their names (the defaults are the contract; a prefix
isolates tenants) and each service's snapshot topic."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class TopicRole(StrEnum):
    """What a topic is for; a ``Topics`` field of the same name holds its name.

    >>> TopicRole.WALLET == "wallet", Topics().name(TopicRole.VAULT)
    (True, 'holdem.dealer.vault')
    """

    COMMANDS = "commands"
    ROUNDS = "rounds"
    WALLET = "wallet"
    VAULT = "vault"
    REJECTED = "rejected"
    QUERIES = "queries"
    REPLIES = "replies"
    SEAMLESS_REPLIES = "seamless_replies"
    ADMIN = "admin"
    TABLES = "tables"


ROLES: tuple[TopicRole, ...] = tuple(TopicRole)


class Topics(BaseModel):
    """Topic names; the defaults are the contract, a prefix isolates tests and tenants.

    >>> Topics().commands
    'holdem.commands'
    >>> Topics().with_prefix("t1").rounds
    't1.holdem.rounds'
    >>> Topics().with_prefix("t1").prefix, Topics().prefix
    ('t1', '')
    """

    model_config = ConfigDict(frozen=True)

    commands: str = "holdem.commands"
    rounds: str = "holdem.rounds"
    wallet: str = "holdem.wallet"
    vault: str = "holdem.dealer.vault"
    rejected: str = "holdem.rejected"
    queries: str = "holdem.queries"  # request/reply: the query service's (holdem.query)
    replies: str = "holdem.replies"
    # The seamless wallet bridge (ADR 015): the operator's wallet's answers to the wallet.
    seamless_replies: str = "holdem.seamless.replies"
    admin: str = "holdem.admin"  # the admin's table commands, keyed by table_id
    tables: str = "holdem.tables"  # table events (opened, changed, closed), keyed by table_id

    def name(self, role: str) -> str:
        """The name of the topic of ``role`` (a ``TopicRole``)."""
        return str(getattr(self, TopicRole(role).value))

    def names(self) -> tuple[str, ...]:
        """All topic names, in field order."""
        return tuple(getattr(self, field) for field in type(self).model_fields)

    def with_prefix(self, prefix: str) -> Topics:
        """The same topics under `prefix.`, e.g. `t1.holdem.commands`."""
        return Topics(**{field: f"{prefix}.{name}" for field, name in self.model_dump().items()})

    @property
    def prefix(self) -> str:
        """The prefix these topics were put under ('' for the defaults)."""
        return self.commands.removesuffix("holdem.commands").removesuffix(".")

    @classmethod
    def unique(cls, tag: str = "test") -> Topics:
        """Default topics under a random prefix, so each test owns fresh, empty topics."""
        return cls().with_prefix(f"{tag}-{uuid.uuid4().hex[:12]}")


def topics_from_env(environ: Mapping[str, str] | None = None) -> Topics:
    """The game's topics under ``HOLDEM_TOPIC_PREFIX`` (the services' setting), if it is set.

    >>> topics_from_env({"HOLDEM_TOPIC_PREFIX": "demo-1"}).wallet
    'demo-1.holdem.wallet'
    >>> topics_from_env({}).wallet
    'holdem.wallet'
    """
    prefix = (os.environ if environ is None else environ).get("HOLDEM_TOPIC_PREFIX", "")
    return Topics().with_prefix(prefix) if prefix else Topics()


def snapshot_topic(topics: Topics, service: str) -> str:
    """``[prefix.]holdem.<service>.snapshots``: where a service keeps its state's snapshots.

    >>> snapshot_topic(Topics().with_prefix("t1"), "wallet")
    't1.holdem.wallet.snapshots'
    """
    return topics.commands.removesuffix("holdem.commands") + f"holdem.{service}.snapshots"
