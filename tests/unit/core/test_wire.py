"""The wire vocabulary: one name per topic role, the partitioner equal to Kafka's, the doctests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

from aiokafka.partitioner import murmur2 as aiokafka_murmur2
from hypothesis import given
from hypothesis import strategies as st

import holdem.core.wire as wire
from holdem.core.contracts.base import Id
from holdem.core.wire.ids import ID
from holdem.core.wire.partitioning import murmur2, partition_for_key
from holdem.core.wire.topics import ROLES, TopicRole, Topics


def test_every_wire_module_passes_its_doctests() -> None:
    for info in pkgutil.iter_modules(wire.__path__, f"{wire.__name__}."):
        module = importlib.import_module(info.name)
        assert doctest.testmod(module).failed == 0, info.name


def test_every_topic_role_names_a_topic_field_and_every_field_is_a_role() -> None:
    assert [role.value for role in ROLES] == list(Topics.model_fields)
    assert Topics().name(TopicRole.SEAMLESS_REPLIES) == "holdem.seamless.replies"


@given(st.binary(max_size=80))
def test_murmur2_is_kafkas_as_aiokafka_computes_it(key: bytes) -> None:
    assert murmur2(key) == aiokafka_murmur2(key)


@given(st.binary(max_size=40), st.integers(min_value=1, max_value=200))
def test_a_key_lands_where_kafkas_default_partitioner_puts_it(key: bytes, n: int) -> None:
    assert partition_for_key(key, n) == (aiokafka_murmur2(key) & 0x7FFFFFFF) % n


def test_the_contracts_id_and_the_wire_id_accept_the_same_text() -> None:
    from pydantic import TypeAdapter

    adapter = TypeAdapter(Id)
    for text in ("alice", "a.b:c@d-e_f", "x" * 64, "x" * 65, "a b", "", "é"):
        try:
            adapter.validate_python(text)
            accepted = True
        except ValueError:
            accepted = False
        assert accepted == bool(ID.fullmatch(text)), text
