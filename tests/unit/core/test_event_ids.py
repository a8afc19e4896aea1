"""Issue 28: event ids are uuid5's text made straight from hashlib (``decider.uuid5_text``), the
very ids ``uuid.uuid5`` gives, without building a ``UUID`` object per event."""

from __future__ import annotations

import doctest
import random
import uuid
from datetime import UTC, datetime

from holdem.core import decider
from holdem.core.decider import Context, uuid5_text
from holdem.runtime.ingress import Origin


def test_doctests_pass() -> None:
    assert doctest.testmod(decider).failed == 0


def test_uuid5_text_is_uuid5_for_any_namespace_and_name() -> None:
    rng = random.Random(28)
    alphabet = "abc/0123456789-_.é\N{SNOWMAN}\U0001f0a1"
    for _ in range(3_000):
        space = uuid.UUID(bytes=rng.randbytes(16))
        name = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 80)))
        assert uuid5_text(space.bytes, name) == str(uuid.uuid5(space, name))


def test_the_ids_of_events_and_records_are_what_uuid5_gave() -> None:
    ctx = Context(datetime(2026, 1, 1, tzinfo=UTC), cause_id="c1", seed="holdem.commands/2/41")
    space = decider._NAMESPACE
    assert [ctx.next_id(), ctx.next_id()] == [
        str(uuid.uuid5(space, "holdem.commands/2/41/1")),
        str(uuid.uuid5(space, "holdem.commands/2/41/2")),
    ]
    origin = Origin("holdem.rounds", 1, 7, b"{}")
    records = uuid.UUID("3d1f0c8e-5b7a-4c2e-9f61-7a0e2b4c9d13")
    assert origin.cause_id == str(uuid.uuid5(records, "holdem.rounds/1/7"))
