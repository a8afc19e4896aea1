"""`holdem play` in a pseudo-terminal against real services: a round with Call, rebet, history."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import uuid

import pexpect
import pytest
from support.rounds import SALT, deck_for
from support.stack import Stack

from holdem.client.play_view import money

pytestmark = pytest.mark.kafka

PROMPT_S = 60  # bounds each wait for the screen; a round takes about a second
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
MENU = "[q]uit"


def spawn(stack: Stack, player: str) -> pexpect.spawn:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_KAFKA_")},
        **stack.kafka.operator.env(),
        "HOLDEM_TOPIC_PREFIX": stack.prefix,
        "HOLDEM_TABLE_ANTE_MIN": "10",  # the stack's wallet table (tests/support/stack.py)
        "HOLDEM_TABLE_ANTE_MAX": "1000",
        "HOLDEM_TABLE_BONUS_MAX": "500",
        "COLUMNS": "120",
        "TERM": "xterm-256color",
    }
    command = ["-m", "holdem.core.cli", "play", "--player", player, "--deposit", "100"]
    return pexpect.spawn(
        sys.executable, command, env=env, encoding="utf-8", timeout=PROMPT_S, dimensions=(50, 120)
    )


def play_a_session(child: pexpect.spawn) -> str:
    """Call with ante 5 and AA Bonus 2.50, rebet and fold, look at the history, quit."""
    screen: list[str] = []

    def until(text: str) -> None:
        child.expect_exact(text)
        screen.append(child.before + child.after)

    until(MENU)
    child.sendline("b")
    until("Ante")
    child.sendline("5")
    until("AA Bonus")
    child.sendline("2.5")
    until("[f]old")
    child.sendline("c")
    until(MENU)
    child.sendline("r")
    until("[f]old")
    child.sendline("f")
    until(MENU)
    child.sendline("h")
    until(MENU)
    child.sendline("q")
    child.expect(pexpect.EOF)
    screen.append(child.before)
    return ANSI.sub("", "".join(screen))


async def test_a_person_plays_a_round_with_call_and_sees_cards_result_and_balance(
    stack: Stack,
) -> None:
    player = f"play-{uuid.uuid4().hex[:8]}"
    stack.decks.push(deck_for("AsAd", "7c2d", "AhKs9d4c3h"), SALT)
    child = spawn(stack, player)
    try:
        screen = await asyncio.to_thread(play_a_session, child)
    finally:
        child.close(force=True)

    settled = [e for e in stack.events(player) if e.type == "round.settled"]
    money_moves = [e for e in stack.events(player, "wallet") if hasattr(e, "available")]
    assert len(settled) == 2 and settled[1].decision == "fold", screen
    first = settled[0]
    assert re.search(r"Your cards:\s+A♠\s+A♦\s+Flop:\s+A♥\s+K♠\s+9♦", screen), screen
    assert re.search(r"Dealer:\s+7♣\s+2♦\s+Turn, river:\s+4♣\s+3♥", screen), screen
    assert f"Result: {first.result.upper()}" in screen, screen
    bonus_row = rf"AA Bonus[\s│]+2\.50[\s│]+{re.escape(money(first.bonus_return))}"
    assert re.search(bonus_row, screen), screen
    balance_after_first = 10_000 - 500 - 250 - 1_000 + first.total_return
    assert f"Balance: {money(balance_after_first)} EUR" in screen, screen
    assert f"Balance: {money(money_moves[-1].available)} EUR" in screen, screen
    assert "This session" in screen and "fold" in screen, screen
    assert child.exitstatus == 0, screen
