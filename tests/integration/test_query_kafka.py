"""The query service on a real broker, behind the four services: history, balance and open round
match what was played, and a restarted query service (snapshot + tail) answers the same."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.kafka import Cluster
from support.messages import command
from support.stack import WAIT_S, Stack
from support.tables import bet_at, terms

from holdem.client import Operator
from holdem.client.history import history_main, round_main
from holdem.client.queries import QueryClient, QueryRefusedError
from holdem.core.cards import Card
from holdem.core.contracts import (
    Call,
    Deposit,
    Fold,
    Mode,
    PlaceBet,
    QueryReason,
    Settled,
)
from holdem.core.contracts.queries import HISTORY_DEFAULT, Reply
from holdem.core.deck import verify_commitment
from holdem.core.wire.topics import Topics

pytestmark = pytest.mark.kafka
ENVELOPE = {"event_id", "occurred_at", "causation_id", "correlation_id"}


@pytest.fixture
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    running = Stack(kafka, Topics.unique("query"), snapshot_interval_s=0.3)
    await running.open()
    try:
        await running.start("query")
        yield running
    finally:
        await running.close()


def printed_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What the CLI printed (the services' debug logs share stdout in this process)."""
    return [line for line in capsys.readouterr().out.splitlines() if "[debug" not in line]


def answer(reply: Reply) -> dict[str, Any]:
    return reply.model_dump(exclude=ENVELOPE)


async def until(ask: Any, done: Any, what: str) -> Any:
    """Ask again until the answer shows what was played (the service folds asynchronously)."""
    found: list[Any] = []

    async def poll() -> bool:
        found[:] = [await ask()]
        return bool(done(found[0]))

    deadline = time.monotonic() + WAIT_S
    while not await poll():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: last {found}")
        await asyncio.sleep(0.2)
    return found[0]


async def test_history_balance_and_open_round_survive_a_restart(
    stack: Stack,
    kafka: Cluster,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    player = f"q-{uuid.uuid4().hex[:8]}"
    await stack.send(command(Deposit, player, currency="EUR", amount=10_000))
    await stack.event(player, "wallet.deposited")
    played: list[str] = []
    for decision in (Call, Fold, Call):
        round_id = f"{player}-{len(played)}"
        await stack.send(command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10))
        await stack.event(player, "round.dealt", round_id)
        await stack.send(command(decision, player, round_id=round_id))
        await stack.event(player, "round.settled", round_id)
        # The next bet once the wallet made the round's last movement (ADR 028): sent on the
        # Settled alone, it can reach the wallet before that Settled does, and the player
        # still has a round open there (refused, rightly).
        await stack.event(player, "round.closed", round_id)
        played.append(round_id)
    await stack.send(command(PlaceBet, player, round_id=f"{player}-open", currency="EUR", ante=20))
    await stack.event(player, "wallet.call_held", f"{player}-open")
    await stack.event(player, "round.dealt", f"{player}-open")
    wallet = stack.balances(player)[(player, "EUR", "real")]

    async with QueryClient(kafka.operator, stack.topics) as client:
        history = await until(
            lambda: client.history(player), lambda r: len(r.rounds) == 3, "3 rounds"
        )
        balance = await until(
            lambda: client.balance(player),
            lambda r: (r.balances[0].available, r.balances[0].held) == wallet,
            "the wallet's balance",
        )
        open_round = await client.open_round(player)
        summary = await client.summary(player, played[0], "bg")
        with pytest.raises(QueryRefusedError) as refused:
            await client.history(player, mode=Mode.FUN)
        assert refused.value.reason == QueryReason.FUN_NOT_KEPT

        # What was played, newest first, each round as its Settled and its revealed deck say.
        assert [v.round_id for v in history.rounds] == played[::-1]
        for view in history.rounds:
            settled: Settled = await stack.event(player, "round.settled", view.round_id)
            assert (view.result, view.total_won) == (settled.result, settled.total_return)
            assert view.deck is not None and view.salt is not None and view.commitment
            deck = [Card.parse(card) for card in view.deck]
            assert verify_commitment(deck, bytes.fromhex(view.salt), view.commitment)
        newest, oldest = history.rounds[0], history.rounds[-1]
        assert oldest.balance_before == 10_000
        assert newest.balance_after == wallet[0] + wallet[1] + 20  # before the open round's 20
        assert [(b.currency, b.mode) for b in balance.balances] == [("EUR", Mode.REAL)]
        view = open_round.open_round
        assert view is not None and view.round_id == f"{player}-open" and view.state == "dealt"
        assert len(view.player_cards) == 2 and len(view.flop) == 3
        assert view.turn is None and view.dealer_cards == () and view.deck is None
        assert "Играч" in summary.text

        # The CLI, as an operator's shell would run it.
        for name, value in {**kafka.operator.env(), "HOLDEM_TOPIC_PREFIX": stack.prefix}.items():
            monkeypatch.setenv(name, value)
        assert await asyncio.to_thread(history_main, [player, "-n", "2", "--lang", "nb"]) == 0
        printed = printed_lines(capsys)
        assert [line.split()[0] for line in printed if line.startswith(f"{player}-")] == [
            played[2],
            played[1],
        ]
        assert sum(line.startswith("Spiller: ") for line in printed) == 2
        assert await asyncio.to_thread(round_main, [played[1], "--player", player]) == 0
        assert any(line.endswith("Fold = -0.10") for line in printed_lines(capsys))
        assert await asyncio.to_thread(round_main, ["nope", "--player", player]) == 1
        assert "unknown_round" in capsys.readouterr().err

        await stack.restart("query")
        again = [
            await client.history(player),
            await client.balance(player),
            await client.open_round(player),
            await client.summary(player, played[0], "bg"),
        ]
    before = [history, balance, open_round, summary]
    assert [answer(r) for r in again] == [answer(r) for r in before]


async def test_a_history_shows_the_tables_history_length_and_follows_its_change(
    stack: Stack, kafka: Cluster
) -> None:
    """N of a table's history is its terms' history_length, read from the table book the query
    service follows; a change applies to the next query."""
    player, table = f"h-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:6]}"
    async with Operator(kafka.admin, stack.topics) as admin:
        opened = await admin.create_table(table, terms(history_length=2))
        await stack.send(command(Deposit, player, currency="EUR", amount=100_000))
        await stack.event(player, "wallet.deposited")
        played = [f"{player}-{n}" for n in range(3)]
        for round_id in played:
            await stack.send(bet_at(table, round_id, 100, player_id=player))
            await stack.event(player, "round.dealt", round_id)
            await stack.send(command(Fold, player, round_id=round_id))
            await stack.event(player, "round.settled", round_id)
            await stack.event(player, "round.closed", round_id)  # the next bet after it

        async with QueryClient(kafka.operator, stack.topics) as client:
            shown = await until(
                lambda: client.history(player),
                lambda r: [v.round_id for v in r.rounds] == played[:0:-1],
                "the last 2 rounds",
            )
            assert shown.limit == 2
            asked = await client.history(player, limit=50, table_id=table)
            assert (len(asked.rounds), asked.limit) == (2, 2)  # not more than the table's N
            await admin.change_table(table, opened.table_version, terms(history_length=3))
            longer = await until(
                lambda: client.history(player, table_id=table),
                lambda r: r.limit == 3,
                "the changed history length",
            )
            assert [v.round_id for v in longer.rounds] == played[::-1]
            other = await client.history(player, table_id="no-such-table")
            assert other.rounds == () and other.limit == HISTORY_DEFAULT
