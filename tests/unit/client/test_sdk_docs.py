"""The SDK's docstring examples run, and its pieces that need no broker behave as documented."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

import holdem.client
import holdem.client.commands
import holdem.client.operator
import holdem.client.play_view
import holdem.client.player
import holdem.client.seamless_sim
import holdem.core.wire.topics
from holdem.client import Operator, Topics, command, partition_for, topics_from_env
from holdem.client.player import last_movement
from holdem.core.contracts import (
    CallCaptured,
    CallReleased,
    Deposit,
    PayoutCredited,
    RoundVoided,
    Settled,
    StakesRefunded,
)
from holdem.core.wire.connection import KafkaConnection

MODULES = [
    holdem.client,
    holdem.client.commands,
    holdem.client.operator,
    holdem.client.player,
    holdem.client.play_view,
    holdem.client.seamless_sim,
    holdem.core.wire.topics,
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstrings_run(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0, result


def test_partitions_match_javas_murmur2_and_spread_players() -> None:
    # Kafka's UtilsTest vectors, signed as Java prints them, reduced as Java's partitioner does
    java = {"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536}
    for key, signed in java.items():
        assert partition_for(key, 7) == (signed & 0x7FFFFFFF) % 7
    spread = {partition_for(f"player-{n}", 3) for n in range(30)}
    assert spread == {0, 1, 2}
    with pytest.raises(ValueError):
        partition_for("p", 0)


def test_idempotency_keys_are_generated_unless_given() -> None:
    first = command(Deposit, "p1", currency="EUR", amount=1)
    second = command(Deposit, "p1", currency="EUR", amount=1)
    given = command(Deposit, "p1", command_id="tx-9", event_id="e-9", currency="EUR", amount=1)

    assert first.command_id != second.command_id and first.event_id != second.event_id
    assert (given.command_id, given.event_id) == ("tx-9", "e-9")


def test_topics_follow_the_services_prefix_setting() -> None:
    assert topics_from_env({"HOLDEM_TOPIC_PREFIX": "x"}) == Topics().with_prefix("x")
    assert Topics.unique("t").prefix.startswith("t-")


def test_an_operator_takes_its_connection_and_topics_without_a_running_loop() -> None:
    operator = Operator(KafkaConnection("h:1"), Topics().with_prefix("a"))

    assert operator.connection.bootstrap == "h:1"
    assert operator.topics.wallet == "a.holdem.wallet"
    assert operator.partitions is None  # read from the broker at start


@pytest.mark.parametrize(
    ("total_return", "decision", "last"),
    [(0, "fold", CallReleased), (0, "call", CallCaptured), (1500, "call", PayoutCredited)],
)
def test_the_last_money_movement_follows_the_result(
    total_return: int, decision: str, last: type
) -> None:
    settled = Settled.model_construct(total_return=total_return, decision=decision)
    assert last_movement(settled) is last
    assert last_movement(RoundVoided.model_construct()) is StakesRefunded


def test_the_play_tables_defaults_are_the_wallets_and_the_dealers() -> None:
    from holdem.dealer.settings import DealerSettings
    from holdem.wallet.settings import WalletSettings

    fields = WalletSettings.model_fields
    info = holdem.client.play_view.TableInfo.from_env({})
    assert info.limits.ante_min == fields["table_ante_min"].default
    assert info.limits.ante_max == fields["table_ante_max"].default
    assert info.limits.bonus_max == fields["table_bonus_max"].default
    assert info.currency == fields["table_currency"].default
    assert info.decision_s == DealerSettings.model_fields["decision_timeout_s"].default


def test_the_send_timeout_is_the_producers_request_timeout_and_must_be_positive() -> None:
    assert Operator(KafkaConnection("h:1"), Topics())._producer_kwargs()["request_timeout_ms"] == (
        40_000
    )
    patient = Operator(KafkaConnection("h:1"), Topics(), send_timeout_s=120)
    kwargs = patient._producer_kwargs()
    assert kwargs["request_timeout_ms"] == 120_000
    assert (kwargs["acks"], kwargs["enable_idempotence"]) == ("all", True)
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="send_timeout_s"):
            Operator(KafkaConnection("h:1"), Topics(), send_timeout_s=bad)
