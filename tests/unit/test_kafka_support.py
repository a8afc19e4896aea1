"""The test broker is found in DESIGN.md's order, and a missing one fails instead of skipping."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from support import kafka


def fake_source(name: str, calls: list[str]) -> object:
    @contextlib.contextmanager
    def source() -> Iterator[str]:
        calls.append(f"start {name}")
        try:
            yield f"{name}:9092"
        finally:
            calls.append(f"stop {name}")

    source.__name__ = name
    return source


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setattr(kafka, "docker_broker", fake_source("docker", seen))
    monkeypatch.setattr(kafka, "local_broker", fake_source("local", seen))
    return seen


def test_the_environment_variable_wins(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "broker.example:9092")
    monkeypatch.setattr(kafka, "docker_engine_answers", lambda: True)
    with kafka.kafka_broker() as bootstrap:
        assert bootstrap == "broker.example:9092"
    assert calls == []


def test_docker_is_used_when_an_engine_answers(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka, "docker_engine_answers", lambda: True)
    with kafka.kafka_broker() as bootstrap:
        assert bootstrap == "docker:9092"
    assert calls == ["start docker", "stop docker"]


def test_the_local_broker_is_the_last_resort_and_is_stopped_after_a_failure(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka, "docker_engine_answers", lambda: False)
    with pytest.raises(AssertionError), kafka.kafka_broker() as bootstrap:
        assert bootstrap == "local:9092"
        raise AssertionError("a failing test")
    assert calls == ["start local", "stop local"]


def test_a_source_that_cannot_start_is_reported_as_no_broker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @contextlib.contextmanager
    def broken() -> Iterator[str]:
        raise OSError("image pull refused")
        yield "unreachable"

    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setattr(kafka, "docker_engine_answers", lambda: True)
    monkeypatch.setattr(kafka, "docker_broker", broken)
    with (
        pytest.raises(kafka.BrokerUnavailableError, match="image pull refused"),
        kafka.kafka_broker(),
    ):
        pass


def test_no_docker_engine_here_is_detected_quickly_and_quietly() -> None:
    assert isinstance(kafka.docker_engine_answers(), bool)
