"""A bet the operator's wallet refused (BetRejected v3, ADR 015) reaches the SDK and the terminal
table as its own code, whatever the operator wrote in its detail."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest
from rich.console import Console

from holdem.client.play import Session
from holdem.client.play_view import TableInfo
from holdem.client.player import Refused
from holdem.core.contracts import BetRejected, OperatorRefusal, parse

WIRE = {
    "type": "round.bet_rejected",
    "version": 3,
    "event_id": "e1",
    "player_id": "p1",
    "round_id": "r1",
    "occurred_at": "2026-01-01T00:00:00Z",
    "command_id": "c1",
}


def rejected(reason: OperatorRefusal, detail: str) -> BetRejected:
    body = {**WIRE, "reason": reason.value, "detail": f"operator wallet: {reason.value} {detail}"}
    message = parse("rounds", json.dumps(body))
    assert isinstance(message, BetRejected)
    return message


class RefusingPlayer:
    def __init__(self, event: BetRejected) -> None:
        self.event = event

    async def bet(self, *bets: Any) -> Any:
        raise Refused(self.event)


@pytest.mark.parametrize("reason", list(OperatorRefusal))
def test_the_sdk_raises_the_operators_code(reason: OperatorRefusal) -> None:
    refused = Refused(rejected(reason, "daily limit"))
    assert refused.reason is reason
    assert (
        str(refused) == f"round.bet_rejected: {reason.value} operator wallet: {reason} daily limit"
    )


def test_the_terminal_table_shows_the_code_and_the_operators_detail_as_text() -> None:
    out = io.StringIO()
    event = rejected(OperatorRefusal.LIMIT_EXCEEDED, "[/b] 100 EUR a day [red]")
    session = Session(
        player=RefusingPlayer(event),  # type: ignore[arg-type]
        table=TableInfo.from_env({}),
        console=Console(file=out, width=200, color_system=None),
    )

    asyncio.run(session.bet((100, 0)))

    assert out.getvalue().strip() == (
        "Bet refused: limit_exceeded operator wallet: limit_exceeded [/b] 100 EUR a day [red]"
    )
