"""Player protection and round closed on a real broker (ADR 028), transfer mode: a wager limit
refuses exactly the bet that would pass it, a session-length limit the first bet after it; a
blocked player's waiting round is finished once by its table's policy and he bets nothing until
unblocked; an operator's EndSession(terminated) ends the session at once; every round closes
once after its last money movement, and the audit is clean."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator

import pytest
from support.kafka import Cluster
from support.stack import Stack
from support.tables import terms

from holdem.client.operator import Operator
from holdem.client.player import Player, Refused
from holdem.client.protection import ProtectionRefused
from holdem.core.contracts import (
    BetPlaced,
    Folded,
    LimitKind,
    OperatorEndReason,
    OperatorRefusal,
    PayoutCredited,
    ProtectionRefusal,
    ProtectionRejection,
    RoundClosed,
    SessionEnded,
    SessionEndReason,
    SessionRefusal,
    StakesRefunded,
    TimeoutPolicy,
)
from holdem.core.wire.topics import Topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]

ANTE = 500
WORST = 3 * ANTE  # what a bet may wager: ante and the call
TABLE = terms(timeout_policy=TimeoutPolicy.FOLD, decision_timeout_s=300, idle_timeout_s=300)


@pytest.fixture
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    running = Stack(kafka, Topics.unique("protection"), snapshot_interval_s=0.3)
    await running.open()  # wallet, dealer, settlement
    try:
        yield running
    finally:
        await running.close()


async def called_round(player: Player) -> None:
    placed = await player.bet(ANTE)
    await placed.dealt()
    await placed.call()
    await placed.outcome()


async def test_limits_blocks_and_operator_ends_are_honoured_and_each_round_closes_once(
    stack: Stack, kafka: Cluster
) -> None:
    run = uuid.uuid4().hex[:6]
    table_id = f"{run}-t"
    async with (
        Operator(kafka.admin, stack.topics) as admin,
        Operator(kafka.operator, stack.topics) as operator,
    ):
        await admin.create_table(table_id, TABLE)
        limited, blocked, ended = (
            Player(operator, f"p-{run}-{name}", table_id=table_id)
            for name in ("limited", "blocked", "ended")
        )
        for player in (limited, blocked, ended):
            await player.deposit(100_000)

        # A wager limit of two called rounds, a session of at most 3 s.
        with pytest.raises(ProtectionRefused) as unknown:
            await operator.set_limits(f"p-{run}-nobody", wager_per_day=1)
        assert unknown.value.reason is ProtectionRejection.UNKNOWN_PLAYER
        await operator.set_limits(limited.player_id, wager_per_day=2 * WORST)
        await called_round(limited)
        await called_round(limited)
        with pytest.raises(Refused) as refused:
            await limited.bet(ANTE)
        assert refused.value.reason is ProtectionRefusal.LIMIT_REACHED
        assert refused.value.event.limit is LimitKind.WAGER_PER_DAY  # type: ignore[union-attr]
        # The operator ends that session for the limit; the next one may last 3 s at most.
        end = await operator.end_session(limited.player_id, table_id, OperatorEndReason.LIMIT)
        assert end.reason is SessionEndReason.LIMIT
        await operator.set_limits(limited.player_id, session_length_s=3)  # no wager limit now
        await called_round(limited)
        await asyncio.sleep(3.2)
        with pytest.raises(Refused) as refused:
            await limited.bet(ANTE)
        assert refused.value.event.limit is LimitKind.SESSION_LENGTH  # type: ignore[union-attr]

        # Blocked with a round waiting for his decision: the table's policy (fold) finishes it.
        waiting = await blocked.bet(ANTE)
        await waiting.dealt()
        await operator.block(blocked.player_id, "self-exclusion")
        outcome = await waiting.outcome()
        assert outcome.settled is not None and outcome.settled.decision == "fold"
        with pytest.raises(Refused) as refused:
            await blocked.bet(ANTE)
        assert refused.value.reason is OperatorRefusal.PLAYER_BLOCKED
        await operator.unblock(blocked.player_id)
        await called_round(blocked)

        # The operator terminates a session with a round waiting: at once, by the policy.
        open_round = await ended.bet(ANTE)
        await open_round.dealt()
        end = await operator.end_session(ended.player_id, table_id, OperatorEndReason.TERMINATED)
        assert end.reason is SessionEndReason.TERMINATED
        assert (await open_round.outcome()).settled is not None
        with pytest.raises(Refused) as refused:
            await ended.end_session()
        assert refused.value.reason is SessionRefusal.NO_SESSION  # nothing left open

        await stack.assert_sound(limited.player_id, blocked.player_id, ended.player_id)

    for player in (limited, blocked, ended):
        events = stack.events(player.player_id)
        money = stack.events(player.player_id, "wallet")
        placed = [e.round_id for e in events if isinstance(e, BetPlaced)]
        closed = Counter(e.round_id for e in events if isinstance(e, RoundClosed))
        ends = {e.round_id for e in money if isinstance(e, PayoutCredited | StakesRefunded)}
        assert closed == Counter(placed) and set(placed) == ends, player.player_id
    blocked_events = stack.events(blocked.player_id)
    [ended_blocked] = [e for e in blocked_events if isinstance(e, SessionEnded)]
    assert ended_blocked.reason is SessionEndReason.BLOCKED
    finished = [e for e in blocked_events if isinstance(e, Folded)]
    assert [(e.round_id, e.auto) for e in finished] == [(waiting.round_id, True)]  # once
    [terminated] = [e for e in stack.events(ended.player_id) if isinstance(e, SessionEnded)]
    assert terminated.reason is SessionEndReason.TERMINATED
