"""The test-mode dealer service on the in-memory transport (ADR 030): it refuses to run on a
book with real money, at start and when such a table opens; it deals a forced deck once across
a restart; a ForceNextDeck with bad cards is dead-lettered as invalid."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.dealer import VAULT_KEYS, call
from support.deciders import NOW
from support.memory import Log, started
from support.rounds import RoundEvents
from support.tables import terms

from holdem.core.contracts import (
    Dealt,
    DeckForced,
    ForceNextDeck,
    MessageRejected,
    Mode,
    Reason,
    TableOpened,
    dump,
    parse,
)
from holdem.dealer.app import RealMoneyInTestMode, create_app
from holdem.dealer.settings import DealerSettings
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport

ROYAL = ("As", "Ks", "4c", "4d", "Qs", "Js", "Ts", "2h", "7d")


def opened(table_id: str, mode: Mode) -> TableOpened:
    return TableOpened(
        event_id=uuid.uuid4().hex,
        table_id=table_id,
        occurred_at=NOW,
        command_id=uuid.uuid4().hex,
        fingerprint="0" * 32,
        table_version=1,
        terms=terms(mode=mode),
    )


def force(cards: Any = ROYAL) -> ForceNextDeck:
    return ForceNextDeck(
        event_id=uuid.uuid4().hex,
        command_id=uuid.uuid4().hex,
        player_id="p1",
        occurred_at=NOW,
        cards=cards,
    )


def dealer_app(transport: MemoryTransport, test_mode: bool = True) -> tuple[ServiceApp, list[Any]]:
    """A dealer app whose fatal errors are recorded instead of ending the process."""
    settings = DealerSettings(
        topic_prefix="t1",
        metrics_port=0,
        dealer_vault_keys=VAULT_KEYS,
        dealer_test_mode=test_mode,
    )
    service = create_app(settings, transport=transport, registry=CollectorRegistry())
    fatal: list[Any] = []
    service.loop.wiring.fatal = fatal.append
    return service, fatal


async def put(transport: MemoryTransport, service: ServiceApp, role: str, message: Any) -> None:
    key = getattr(message, "player_id", None) or message.table_id
    await transport.publish(service.processor.topic_of(role), dump(message), key=key.encode())
    await transport.settle()


@asynccontextmanager
async def running(transport: MemoryTransport) -> AsyncIterator[tuple[ServiceApp, Log]]:
    service, fatal = dealer_app(transport)
    async with started(service, transport) as log:
        yield service, log
    assert not fatal


def rounds(log: Log, kind: type) -> list[Any]:
    messages = [parse("rounds", raw) for raw in log.values("rounds")]
    return [m for m in messages if isinstance(m, kind)]


async def test_a_test_mode_dealer_refuses_to_start_on_a_book_with_a_real_money_table() -> None:
    transport = MemoryTransport()
    service, fatal = dealer_app(transport)
    await transport.ensure_topics([service.processor.topic_of("tables")], 3)
    await put(transport, service, "tables", opened("fun-1", Mode.FUN))
    await put(transport, service, "tables", opened("real-1", Mode.REAL))

    with pytest.raises(RealMoneyInTestMode, match="real-1"):
        async with started(service, transport):
            pass  # pragma: no cover - it never starts

    assert len(fatal) == 1 and "fun-1" not in str(fatal[0])


async def test_a_dealer_not_in_test_mode_runs_on_real_money_and_a_fun_book_is_fine() -> None:
    transport = MemoryTransport()
    service, fatal = dealer_app(transport, test_mode=False)
    await transport.ensure_topics([service.processor.topic_of("tables")], 3)
    await put(transport, service, "tables", opened("real-1", Mode.REAL))
    async with started(service, transport):
        pass
    fun = MemoryTransport()
    async with running(fun) as (service, _):
        await put(fun, service, "tables", opened("fun-1", Mode.FUN))
    assert not fatal


async def test_a_real_money_table_opened_while_it_runs_is_fatal() -> None:
    transport = MemoryTransport()
    service, fatal = dealer_app(transport)
    async with started(service, transport):
        table = opened("real-2", Mode.REAL)  # not settled: its reader ends (the process, live)
        await transport.publish(service.processor.topic_of("tables"), dump(table), key=b"real-2")
        for _ in range(50):
            if fatal:
                break
            await asyncio.sleep(0.05)

    assert fatal and isinstance(fatal[0], RealMoneyInTestMode) and "real-2" in str(fatal[0])


async def test_a_restart_keeps_the_pending_deck_and_deals_it_once() -> None:
    transport = MemoryTransport()
    async with running(transport) as (service, log):
        await put(transport, service, "commands", force())
        assert [e.cards for e in rounds(log, DeckForced)] == [ROYAL]

    async with running(transport) as (service, log):  # rebuilt from the log: still pending
        await put(transport, service, "rounds", RoundEvents(mode=Mode.FUN).bet_placed())
        await put(transport, service, "commands", call())

    async with running(transport) as (service, log):  # and consumed, once
        second = RoundEvents(round_id="r2", mode=Mode.FUN).bet_placed()
        await put(transport, service, "rounds", second)
        dealt = {d.round_id: d for d in rounds(log, Dealt)}

    assert dealt["r1"].forced and dealt["r1"].player_cards == ("As", "Ks")
    assert not dealt["r2"].forced


async def test_a_force_with_bad_cards_is_dead_lettered_as_invalid() -> None:
    transport = MemoryTransport()
    async with running(transport) as (service, log):
        raw = dump(force(("As",))).replace(b'["As"]', b'["As","As"]')
        await transport.publish(service.processor.topic_of("commands"), raw, key=b"p1")
        await transport.settle()
        rejected = [parse("rejected", r) for r in log.values("rejected")]

    assert [r.reason for r in rejected] == [Reason.INVALID]
    assert isinstance(rejected[0], MessageRejected) and not rounds(log, DeckForced)
