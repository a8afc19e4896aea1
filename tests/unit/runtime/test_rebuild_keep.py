"""Issue 26 item 4, ADR 043: a rebalance keeps the state of a partition this instance held and is
assigned again, unless somebody else moved it meanwhile; then it is rebuilt from the log.

On the in-memory transport, whose group gives every partition to its first member: a second
member joining rebalances the group and hands the first one its partitions back. To have
somebody else move a partition, the test stops the first member's loop (its consumer stays in
the group, its listener runs), reorders the group so that the other member gets every
partition, lets it (or a stray writer) move one, and gives the partitions back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from typing import Any

import pytest
from structlog.testing import capture_logs
from support.messages import command
from support.toy import TOY

from holdem.core.contracts import Call, Malfunction, Message, dump
from holdem.core.decider import Context
from holdem.core.wire.partitioning import partition_for_key
from holdem.runtime import app as app_module
from holdem.runtime.app import ServiceApp, build_app, running
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.processor import Spec
from holdem.runtime.settings import RuntimeSettings

PARTITIONS = 3
PLAYER = "p1"
PARTITION = partition_for_key(PLAYER.encode(), PARTITIONS)
COMMANDS, ROUNDS = "holdem.commands", "holdem.rounds"
EVERY = list(range(PARTITIONS))


@asynccontextmanager
async def toys(
    monkeypatch: pytest.MonkeyPatch, spec: Spec[set[str]] = TOY
) -> AsyncIterator[tuple[ServiceApp, ServiceApp, MemoryTransport]]:
    """Two instances of the toy service in one group: ``first`` holds every partition, having
    answered r1, then ``second`` joins (and gets none)."""
    exits: list[BaseException] = []
    monkeypatch.setattr(app_module, "exit_fatally", lambda _service, error: exits.append(error))
    transport = MemoryTransport(PARTITIONS)
    first = build_app(spec, RuntimeSettings(instance_id="0"), transport=transport)
    second = build_app(spec, RuntimeSettings(instance_id="1"), transport=transport)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(running(first))
        await transport.settle()
        await call("r1")(transport)
        await transport.settle()
        await stack.enter_async_context(running(second))
        await transport.settle()
        yield first, second, transport
    assert exits == []


def call(round_id: str) -> Any:
    async def send(transport: MemoryTransport) -> None:
        await transport.publish(COMMANDS, dump(command(Call, PLAYER, round_id=round_id)), key=b"p1")

    return send


def replayed(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["event"] == "replayed"]


async def rebalance(transport: MemoryTransport, service: ServiceApp, *, first: ServiceApp) -> None:
    """A rebalance of ``service``'s group that gives every partition to ``first``."""
    group = transport._group(service.loop.group_id)
    members = group.members
    group.members = [m for m in members if m is first.loop.group.consumer] + [
        m for m in members if m is not first.loop.group.consumer
    ]
    async with group.lock:
        await transport._rebalance(group)


def as_if_next_generation(first: ServiceApp, saved: dict[int, Any]) -> None:
    """Puts back what the first revoke set aside as if this assignment were the generation right
    after it: what the offsets and ends checks catch when the generation check cannot (a
    writer the group does not know of, such as a zombie of an older generation)."""
    group = first.loop.group
    assert group.kept == {}  # a generation skipped: its own check dropped them already
    group.kept = {p: replace(k, generation=group.generation - 1) for p, k in saved.items()}


async def test_a_rebalance_keeps_the_states_nobody_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    with capture_logs() as lines:
        async with toys(monkeypatch) as (first, _second, transport):
            # The second member's join was a rebalance: the first got its partitions back.
            state = first.processor.store.parts[PARTITION]
            assert state.state == {"r1"}
            rebuilds = replayed(lines)
            assert rebuilds[-1]["rebuilt"] == [] and rebuilds[-1]["kept"] == EVERY
            assert rebuilds[-1]["partitions"] == EVERY  # what it serves
            assert rebuilds[-1]["events"] == 0  # nothing read again
            # Its decisions go on from the kept state: r1 is not answered twice, r2 is.
            await call("r1")(transport)
            await call("r2")(transport)
            await transport.settle()
            assert first.processor.store.parts[PARTITION] is state
            answered = [v for v in transport.values(ROUNDS)]
            assert len(answered) == 2 and b'"r2"' in answered[1]


async def test_a_partition_whose_offsets_another_member_committed_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with toys(monkeypatch) as (first, second, transport):
        await first.loop.stop_task()  # its listener still runs; its loop rebuilds nothing
        await rebalance(transport, first, first=second)  # the second gets every partition
        saved = dict(first.loop.group.kept)
        assert sorted(saved) == EVERY  # set aside at the first revoke
        await call("r2")(transport)
        await transport.settle()  # decided and committed by the second member
        assert len(transport.values(ROUNDS)) == 2
        await rebalance(transport, first, first=first)  # and the first gets them back
        as_if_next_generation(first, saved)
        with capture_logs() as lines:
            async with first.processor.lock:
                await first.loop._rebuild_pending()
        [line] = replayed(lines)
        assert line["rebuilt"] == [PARTITION]  # the one the second member moved
        assert line["kept"] == [p for p in EVERY if p != PARTITION]
        dropped = [entry for entry in lines if entry["event"].startswith("kept state dropped")]
        assert [entry["partition"] for entry in dropped] == [PARTITION]
        # Rebuilt from the log, it knows what the second member decided.
        assert first.processor.store.parts[PARTITION].state == {"r1", "r2"}


async def test_a_kept_partition_with_a_record_written_after_the_revoke_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No offset moved, but a record of one of its other state topics (the toy's rounds) was
    written after the revoke, as a tick of another owner would: the ends catch it."""
    async with toys(monkeypatch) as (first, second, transport):
        await first.loop.stop_task()
        await rebalance(transport, first, first=second)
        saved = dict(first.loop.group.kept)
        done = Malfunction(
            **Context(now=first.processor.clock(), cause_id="tick").envelope(PLAYER, "r9"),
            source="toy",
            reason="x",
        )
        await transport.publish(ROUNDS, dump(done), key=PLAYER.encode())
        await rebalance(transport, first, first=first)
        as_if_next_generation(first, saved)
        with capture_logs() as lines:
            async with first.processor.lock:
                await first.loop._rebuild_pending()
        [line] = replayed(lines)
        assert line["rebuilt"] == [PARTITION]
        assert line["kept"] == [p for p in EVERY if p != PARTITION]
        assert first.processor.store.parts[PARTITION].state == {"r1", "r9"}


async def test_a_member_evicted_before_its_revoke_keeps_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its heartbeat learnt it was evicted (its generation reset) before it rejoined: another
    member may have had the partitions, so nothing is set aside."""
    async with toys(monkeypatch) as (first, _second, transport):
        await first.loop.stop_task()
        consumer = first.loop.group.consumer
        consumer.generation = None  # type: ignore[union-attr]
        await rebalance(transport, first, first=first)
        assert first.loop.group.kept == {}
        with capture_logs() as lines:
            async with first.processor.lock:
                await first.loop._rebuild_pending()
        [line] = replayed(lines)
        assert line["rebuilt"] == EVERY and line["kept"] == []
        assert first.processor.store.parts[PARTITION].state == {"r1"}


async def test_offsets_unreadable_at_the_revoke_keep_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with toys(monkeypatch) as (first, _second, transport):
        await first.loop.stop_task()
        consumer = first.loop.group.consumer

        async def unreachable(tps: Any) -> Any:
            raise ConnectionError("broker unreachable")

        monkeypatch.setattr(consumer, "committed", unreachable)
        await rebalance(transport, first, first=first)
        assert first.loop.group.kept == {}
        monkeypatch.undo()
        with capture_logs() as lines:
            async with first.processor.lock:
                await first.loop._rebuild_pending()
        [line] = replayed(lines)
        assert line["rebuilt"] == EVERY and line["kept"] == []


TICKING: list[bool] = []  # the test's switch: the app's own periodic ticks decide nothing


def tick(state: set[str], ctx: Context) -> list[Message]:
    """Answers r1 a second time, once switched on: what a tick decides on a partition."""
    if not TICKING or "r1" not in state:
        return []
    return [Malfunction(**ctx.envelope(PLAYER, "r1-timeout"), source="toy", reason="late")]


async def test_a_tick_between_the_revoke_and_the_rebuild_decides_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The states set aside are out of the store: a tick that got the lock after the revoke
    (its caught-up check passed before it) sees no partition, as it did when the revoke forgot
    them, and decides nothing on a partition that may be another member's by now."""
    async with toys(monkeypatch, replace(TOY, tick=tick)) as (first, second, transport):
        await first.loop.stop_task()
        await rebalance(transport, first, first=second)
        assert sorted(first.loop.group.kept) == EVERY
        assert first.processor.store.parts == {}
        TICKING[:] = [True]
        try:
            await first.processor.run_tick()
        finally:
            TICKING.clear()
        assert len(transport.values(ROUNDS)) == 1  # r1's answer only


async def test_a_generation_skipped_rebuilds_every_partition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first member owned nothing for a generation (the second had every partition, and
    could have written records that carry no offsets, a tick's, on their inputs): whatever
    offsets and ends say, nothing it set aside before is taken back (ADR 043)."""
    async with toys(monkeypatch) as (first, second, transport):
        await first.loop.stop_task()
        await rebalance(transport, first, first=second)
        assert sorted(first.loop.group.kept) == EVERY
        await rebalance(transport, first, first=first)  # nobody decided anything meanwhile
        assert first.loop.group.kept == {}
        with capture_logs() as lines:
            async with first.processor.lock:
                await first.loop._rebuild_pending()
        [line] = replayed(lines)
        assert line["rebuilt"] == EVERY and line["kept"] == []
        assert first.processor.store.parts[PARTITION].state == {"r1"}


async def test_kept_states_are_taken_back_only_by_the_next_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with toys(monkeypatch) as (first, second, transport):
        await first.loop.stop_task()
        await rebalance(transport, first, first=second)
        saved = dict(first.loop.group.kept)
        await rebalance(transport, first, first=first)
        group = first.loop.group
        group.kept = {p: replace(k, generation=group.generation - 2) for p, k in saved.items()}
        with capture_logs() as lines:
            async with first.processor.lock:
                await first.loop._rebuild_pending()
        [line] = replayed(lines)
        assert line["rebuilt"] == EVERY and line["kept"] == []
        dropped = "kept states dropped: not the next generation"
        assert any(entry["event"] == dropped for entry in lines)
