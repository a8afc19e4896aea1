"""A service's own events taken back by the exact bytes it published (holdem.runtime.echoes)."""

from __future__ import annotations

from typing import Any

from holdem.core.contracts import RoundClosed
from holdem.runtime.echoes import Echoes


class Event:
    """Stands for an event the service built (not a versioned contract)."""


def test_an_echo_is_taken_back_once_by_its_topic_key_and_bytes() -> None:
    echoes, event = Echoes(), Event()
    echoes.remember("rounds", b"p1", b'{"a":1}', event)
    assert echoes.take("rounds", b"p1", b'{"a":1} ') is None  # one byte more: parsed
    assert echoes.take("rounds", b"p2", b'{"a":1}') is None  # another key
    assert echoes.take("wallet", b"p1", b'{"a":1}') is None  # another topic
    assert echoes.take("rounds", None, b'{"a":1}') is None
    assert echoes.take("rounds", b"p1", b'{"a":1}') is event
    assert echoes.take("rounds", b"p1", b'{"a":1}') is None  # once
    assert len(echoes) == 0


def test_at_most_the_limit_wait_and_the_oldest_goes_first() -> None:
    echoes = Echoes(limit=3)
    events = [Event() for _ in range(5)]
    for n, event in enumerate(events):
        echoes.remember("rounds", b"p1", str(n).encode(), event)
    assert len(echoes) == 3
    assert echoes.take("rounds", b"p1", b"0") is None
    assert echoes.take("rounds", b"p1", b"1") is None
    assert [echoes.take("rounds", b"p1", str(n).encode()) for n in (2, 3, 4)] == events[2:]


def test_an_event_written_at_an_older_version_is_parsed_when_it_comes_back(
    monkeypatch: Any,
) -> None:
    older = RoundClosed.newest() - 1
    monkeypatch.setattr(RoundClosed, "WRITES", older)
    event = RoundClosed.model_construct()
    echoes = Echoes()
    echoes.remember("rounds", b"p1", b"{}", event)
    assert echoes.take("rounds", b"p1", b"{}") is None


def test_clear_forgets_every_echo() -> None:
    echoes = Echoes()
    echoes.remember("rounds", b"p1", b"x", Event())
    echoes.clear()
    assert echoes.take("rounds", b"p1", b"x") is None
