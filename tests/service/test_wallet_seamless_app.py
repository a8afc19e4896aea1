"""The wallet service in seamless mode (ADR 015) on the in-memory transport, with the
reference operator wallet answering its requests: the runtime's wiring (topics, folds, ticks,
dead letters) around the transitions the unit tests check one by one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from support.deciders import NOW
from support.memory import Log, started
from support.seamless import game, settled_for
from support.wallet import deposit, place_bet

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import Message, Reason, dump, parse
from holdem.core.contracts.seamless import ReplyRefused, SeamlessReply, SeamlessRequest
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings

ROLES = ("wallet", "rounds", "rejected")


@dataclass
class Bridge:
    service: ServiceApp
    operator: FaultyOperator
    now: datetime = NOW
    log: Log | None = None

    @property
    def seen(self) -> dict[str, list[bytes]]:
        """The values on the wallet's topics, in the order they were written."""
        assert self.log is not None
        return {role: self.log.values(role) for role in ROLES}

    async def send(self, role: str, message: Message | bytes, key: bytes | None = None) -> None:
        assert self.log is not None
        raw = message if isinstance(message, bytes) else dump(message)
        key = key or (b"p1" if isinstance(message, bytes) else message.player_id.encode())
        await self.log.publish(role, raw, key)

    async def answer(self) -> list[SeamlessReply]:
        """Hand the operator what the wallet asked since, and deliver one step of answers."""
        for request in self.requests()[self._asked :]:
            self.operator.receive(request)
        self._asked = len(self.requests())
        replies = self.operator.step()
        for reply in replies:
            await self.send("seamless_replies", reply)
        return replies

    async def tick(self, seconds: float) -> None:
        assert self.log is not None
        self.now += timedelta(seconds=seconds)
        await self.service.processor.run_tick()
        await self.log.transport.settle()

    def types(self, role: str) -> list[str]:
        """The types on a topic; "requests": the bridge's records on the wallet's topic."""
        if role == "requests":
            return [request.type for request in self.requests(refusals=True)]
        return [parse(role, raw).type for raw in self.seen[role]]

    def requests(self, *, refusals: bool = False) -> list[Any]:
        kinds = (SeamlessRequest, ReplyRefused) if refusals else SeamlessRequest
        found = [parse("wallet", raw) for raw in self.seen["wallet"]]
        return [message for message in found if isinstance(message, kinds)]

    _asked: int = 0


@asynccontextmanager
async def bridge(faults: Faults | None = None) -> AsyncIterator[Bridge]:
    settings = WalletSettings(
        wallet_mode="seamless", seamless_debit_timeout_s=10, seamless_retry_s=5, metrics_port=0
    )
    transport = MemoryTransport()
    service = create_app(settings, transport=transport)
    operator = FaultyOperator(OperatorWallet(opening=100_000), faults or Faults())
    running = Bridge(service, operator)
    service.processor.clock = lambda: running.now
    async with started(service, transport) as log:
        running.log = log
        yield running


async def test_a_round_goes_debit_bet_settlement_credit_through_the_topics() -> None:
    async with bridge() as b:
        await b.send("commands", place_bet("r1", ante=1_000, aa_bonus=500))
        assert b.types("requests") == ["seamless.debit_requested"]
        assert b.types("rounds") == []  # no round before the operator's debit
        await b.answer()
        assert b.types("rounds") == ["round.bet_placed"]
        round_game = game("r1", ante=1_000, aa_bonus=500)
        for event in (round_game.dealt(), round_game.called(), settled_for(round_game, "call")):
            await b.send("rounds", event)
        assert b.types("requests")[-1] == "seamless.credit_requested"
        await b.answer()
        assert b.types("wallet")[-2:] == ["wallet.seamless_credited", "seamless.round_closed"]
        assert b.types("rounds")[-1] == "round.closed"  # after the operator's credit (ADR 028)
        state = b.service.processor.state_for("p1")
        assert not state.bridges.open and state.accounts[("p1", "EUR", "real")].available == 0
        credit = b.requests()[-2]
        assert (
            b.operator.wallet.balance("p1", "EUR") == 100_000 - 3_500 + credit.amount
        )  # ante, bonus, call hold
        [ack] = await b.answer()  # the simulator acknowledges the notice; the wallet is silent
        assert ack.type == "seamless.round_closed_acknowledged" and b.types("requests")[-1] == (
            "seamless.round_closed"
        )
        assert b.operator.wallet.closes == {"r1": 1}


async def test_an_unanswered_debit_is_rolled_back_on_a_tick_and_its_late_answer_refused() -> None:
    async with bridge(Faults(max_delay=50)) as b:
        await b.send("commands", place_bet("r1", ante=1_000))
        await b.answer()  # the answer is on the line for a while
        await b.tick(9)
        assert b.types("requests") == ["seamless.debit_requested"]
        await b.tick(1)
        assert b.types("requests")[-1] == "seamless.rollback_requested"
        rejected = parse("rounds", b.seen["rounds"][-1])
        assert (rejected.type, rejected.reason) == ("round.bet_rejected", Reason.PROCESSING_FAILED)
        await b.answer()  # the operator gets the rollback too
        for reply in b.operator.flush():  # and every answer arrives, late and in any order
            await b.send("seamless_replies", reply)
        assert "seamless.reply_refused" in b.types("requests")
        assert b.types("wallet")[-1] == "wallet.seamless_rolled_back"
        assert b.operator.wallet.balance("p1", "EUR") == 100_000
        assert "round.bet_placed" not in b.types("rounds")


async def test_an_unacknowledged_credit_is_sent_again_on_ticks_and_paid_once() -> None:
    async with bridge() as b:
        await b.send("commands", place_bet("r1", ante=1_000))
        await b.answer()
        b.operator.faults = Faults(drop=1.0)
        round_game = game("r1", ante=1_000)
        for event in (round_game.dealt(), round_game.folded(), settled_for(round_game, "fold")):
            await b.send("rounds", event)
        await b.answer()
        await b.tick(5)
        await b.answer()
        b.operator.faults = Faults(duplicate=1.0)
        await b.tick(5)
        await b.answer()
        credits = [r for r in b.requests() if r.type == "seamless.credit_requested"]
        assert len(credits) == 3 and len({c.tx_id for c in credits}) == 1
        assert b.types("wallet").count("wallet.seamless_credited") == 1
        assert b.operator.wallet.balance("p1", "EUR") == 100_000 - 1_000  # the ante, once


async def test_unreadable_or_misaddressed_replies_are_dead_lettered_and_move_nothing() -> None:
    async with bridge() as b:
        await b.send("commands", place_bet("r1", ante=1_000))
        b.operator.receive(b.requests()[0])
        honest = b.operator.step()[0]
        await b.send("seamless_replies", b'{"type": "seamless.debited", "amount": -5}')
        await b.send("seamless_replies", honest, key=b"p2")  # keyed as another player
        forged = honest.model_copy(update={"amount": 1, "event_id": "forged"})
        await b.send("seamless_replies", forged)
        assert b.types("rejected") == ["rejected.message", "rejected.message"]
        assert b.types("requests")[-1] == "seamless.reply_refused"
        assert b.types("rounds") == []
        await b.send("seamless_replies", honest)
        assert b.types("rounds") == ["round.bet_placed"]


async def test_deposits_are_refused_in_seamless_mode() -> None:
    async with bridge() as b:
        await b.send("commands", deposit(10_000))
        refused = parse("wallet", b.seen["wallet"][0])
        assert (refused.type, refused.reason) == ("wallet.rejected", Reason.INVALID)
