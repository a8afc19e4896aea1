"""The operator guide's SDK example, run as written against real services: one round, money adds
up."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest
from support.stack import Stack

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "operator_round.py"
RUN_TIMEOUT_S = 120  # bounds a hang only; the round takes about a second


def test_the_operator_guide_shows_the_example_verbatim() -> None:
    guide = (REPO / "docs" / "operator-guide.md").read_text()
    assert f"```python\n{EXAMPLE.read_text()}```" in guide


async def test_the_example_plays_a_round_against_the_services(stack: Stack) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_KAFKA_")},
        **stack.kafka.operator.env(),
        "HOLDEM_TOPIC_PREFIX": stack.prefix,
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT_S)
    text = out.decode()

    assert process.returncode == 0, text
    balances = [int(b) for b in re.findall(r"^balance (\d+)$", text, re.M)]
    hole = re.search(r"^hole (\w\w) (\w\w) flop (\w\w) (\w\w) (\w\w)$", text, re.M)
    returned = re.search(r"^result (win|lose|push) returned (\d+)$", text, re.M)
    assert hole and returned and len(balances) == 2, text
    assert balances[0] == 10_000
    # ante 500 + bonus 250 + call 1000 staked, the returns credited: nothing else moved
    assert balances[1] == 10_000 - 1_750 + int(returned.group(2)), text
    dealt = await stack.event("alice", "round.dealt")
    assert list(hole.groups()) == [*dealt.player_cards, *dealt.flop]
