"""The operator's SDK: connect to the game's Kafka, send commands, follow rounds.

>>> from holdem.client import KafkaConnection, Operator, Player, Topics
>>> Operator(KafkaConnection("127.0.0.1:9092"), Topics().with_prefix("t1")).topics.rounds
't1.holdem.rounds'
"""

from holdem.client.commands import command, new_id, partition_for
from holdem.client.operator import Operator
from holdem.client.player import Outcome, Player, Refused, Round, Voided, last_movement
from holdem.client.protection import ProtectionRefused
from holdem.client.watch import StalledError, Watch
from holdem.core.wire.connection import ConnectionConfigError, KafkaConnection
from holdem.core.wire.topics import Topics, topics_from_env

__all__ = [
    "ConnectionConfigError",
    "KafkaConnection",
    "Operator",
    "Outcome",
    "Player",
    "ProtectionRefused",
    "Refused",
    "Round",
    "StalledError",
    "Topics",
    "Voided",
    "Watch",
    "command",
    "last_movement",
    "new_id",
    "partition_for",
    "topics_from_env",
]
