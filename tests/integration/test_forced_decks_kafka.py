"""Forced decks on a real broker (ADR 030), the services as processes: a test-mode dealer takes a
ForceNextDeck, is killed (kill -9) before the round it forces, and the restarted dealer deals
that play-money round from it, once (a second restart does not deal it again); the rules pay the
royal flush 100 to 1; the audit counts it and finds nothing wrong; a real-money table opened
while it runs makes it exit non-zero, and started again it refuses at once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from support.kafka import Cluster
from support.stack import Stack
from support.tables import terms

from holdem.client.operator import Operator
from holdem.client.player import Player, Refused
from holdem.core.cards import Card
from holdem.core.contracts import ForceRefusal, Mode
from holdem.core.deck import verify_commitment
from holdem.core.wire.topics import Topics
from holdem.harness.audit import check, read_run
from holdem.harness.audit_forced import forced_violations
from holdem.ops.launcher import Launcher, ServiceProcess

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(400)]

ROYAL = ("As", "Ks", "4c", "4d", "Qs", "Js", "Ts", "2h", "7d")  # the dealer qualifies on 4s
ANTE, BONUS = 500, 100


async def exited(service: ServiceProcess, within_s: float = 60.0) -> int | None:
    for _ in range(int(within_s * 10)):
        if not service.alive:
            return service.exit_code
        await asyncio.sleep(0.1)
    raise AssertionError(f"{service.label} still running after {within_s}s")


async def test_a_forced_deck_survives_a_kill_is_dealt_once_and_real_money_stops_the_dealer(
    kafka: Cluster, topics: Topics, tmp_path: Path
) -> None:
    prefix = topics.commands.removesuffix(".holdem.commands")
    extra = {"HOLDEM_DEALER_TEST_MODE": "true", "HOLDEM_SNAPSHOT_INTERVAL_S": "0.5"}
    launcher = Launcher(
        kafka.bootstrap, tmp_path, prefix, 3, extra_env=extra, credentials=kafka.principals
    )
    run = uuid.uuid4().hex[:6]
    fun_table, real_table = f"fun-{run}", f"real-{run}"
    try:
        await launcher.start(["wallet", "dealer", "settlement"])
        dealer = launcher.services["dealer"]
        async with (
            Operator(kafka.admin, topics) as admin,
            Operator(kafka.operator, topics) as operator,
        ):
            await admin.create_table(fun_table, terms(mode=Mode.FUN))
            player = Player(operator, f"f-{run}", table_id=fun_table, mode=Mode.FUN)
            player.step_s = 180.0  # a restart waits out the dead member's session
            await player.grant_fun(100_000)
            forced = await operator.force_next_deck(player.player_id, ROYAL)
            assert forced.cards == ROYAL

            await launcher.restart("dealer")  # kill -9 with the forced deck pending
            first = await player.bet(ANTE, BONUS)
            dealt = await first.dealt()
            await first.call()
            outcome = await first.outcome()

            await launcher.restart("dealer")  # rebuilt again: the deck is consumed, for good
            second = await player.bet(ANTE)
            again = await second.dealt()
            await second.fold()
            await second.outcome()

            await admin.create_table(real_table, terms())  # real money: the dealer must stop
            code = await exited(dealer)
            log = dealer.log_since_start()
            dealer.start()  # as its supervisor would: it refuses again, at start
            code_again = await exited(dealer)
        records = await read_run(kafka.admin, topics)
    finally:
        await launcher.stop()

    assert dealt.forced and dealt.player_cards == ("As", "Ks") and dealt.flop == ROYAL[4:7]
    revealed, settled = outcome.revealed, outcome.settled
    assert revealed is not None and revealed.forced and revealed.deck[:9] == ROYAL
    deck = [Card.parse(text) for text in revealed.deck]
    assert verify_commitment(deck, bytes.fromhex(revealed.salt), dealt.commitment)
    assert settled is not None and settled.player_category == "royal_flush"
    assert settled.ante_return == ANTE + 100 * ANTE and settled.call_return == 2 * 2 * ANTE
    assert settled.bonus_return == BONUS + 25 * BONUS
    assert not again.forced
    assert code not in (None, 0) and code_again not in (None, 0)
    assert "real-money" in log and real_table in log
    mine = [
        r
        for r in records
        if r.role == "tables" or getattr(r.message, "player_id", None) == player.player_id
    ]
    assert forced_violations(mine) == []
    report = check(mine)
    assert report.forced == 1 and report.ok, report.violations


async def test_a_production_dealer_refuses_the_sdk_s_force_and_deals_its_deck(
    kafka: Cluster,
) -> None:
    stack = Stack(kafka, Topics.unique("unforced"))  # its dealer: not in test mode
    await stack.open()
    try:
        async with (
            Operator(kafka.admin, stack.topics) as admin,
            Operator(kafka.operator, stack.topics) as operator,
        ):
            await admin.create_table("fun-prod", terms(mode=Mode.FUN))
            player = Player(operator, "u-1", table_id="fun-prod", mode=Mode.FUN)
            await player.grant_fun(100_000)
            with pytest.raises(Refused) as refused:
                await operator.force_next_deck(player.player_id, ROYAL)
            placed = await player.bet(ANTE)
            dealt = await placed.dealt()
            await placed.fold()
    finally:
        await stack.close()

    assert refused.value.reason is ForceRefusal.TEST_MODE_ONLY
    assert not dealt.forced
