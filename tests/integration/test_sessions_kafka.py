"""Sessions on a real broker (ADR 020): an ended session's open round is finished by its
table's policy and settles exactly once, for each policy; an idle timeout does the same, also
when the dealer is killed (kill -9) while the idle timeout runs; resume shows the open round's
session and no hidden card."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from support.kafka import Cluster
from support.stack import WAIT_S, Stack, running_stack
from support.tables import terms

from holdem.client.commands import command
from holdem.client.operator import Operator
from holdem.client.player import Player, Refused, Round
from holdem.client.queries import QueryClient
from holdem.client.sessions import end_session_main
from holdem.core.cards import parse_cards
from holdem.core.contracts import SessionEndReason, SessionRefusal
from holdem.core.contracts.queries import OpenRoundReply
from holdem.core.contracts.rounds import Called, Dealt, Folded, Settled
from holdem.core.contracts.sessions import EndSession, SessionEnded, SessionStarted
from holdem.core.contracts.tables import TimeoutPolicy
from holdem.core.contracts.wallet import PayoutCredited
from holdem.core.strategy import optimal
from holdem.core.wire.topics import Topics
from holdem.harness.audit import read_run
from holdem.ops.launcher import Launcher

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]

ANTE = 500
LONG_S = 300  # decision timeouts and idle timeouts that must not fire during a test


@pytest.fixture
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    async with running_stack(kafka, "sessions", "query") as running:
        yield running


def table(policy: TimeoutPolicy, idle_s: int = LONG_S) -> Any:
    return terms(timeout_policy=policy, decision_timeout_s=LONG_S, idle_timeout_s=idle_s)


def expected_kind(policy: TimeoutPolicy, dealt: Dealt) -> type:
    if policy is TimeoutPolicy.FOLD:
        return Folded
    if policy is TimeoutPolicy.CALL:
        return Called
    best = optimal(parse_cards(dealt.player_cards), parse_cards(dealt.flop))
    return Called if best == "call" else Folded


def once_each(events: list[Any], round_id: str) -> dict[str, Any]:
    """The round's session start, session end, decision, Settled and payout, each asserted to
    have been written exactly once."""
    of_round = [e for e in events if getattr(e, "round_id", None) == round_id]
    counts = Counter(type(e).__name__ for e in events)
    decisions = [e for e in of_round if isinstance(e, Called | Folded)]
    assert counts["SessionStarted"] == 1 and counts["SessionEnded"] == 1, counts
    assert len(decisions) == 1, decisions
    settled = [e for e in of_round if isinstance(e, Settled)]
    payouts = [e for e in of_round if isinstance(e, PayoutCredited)]
    assert len(settled) == 1 and len(payouts) == 1, (settled, payouts)
    assert payouts[0].amount == settled[0].total_return
    return {
        "started": next(e for e in events if isinstance(e, SessionStarted)),
        "ended": next(e for e in events if isinstance(e, SessionEnded)),
        "decision": decisions[0],
        "dealt": next(e for e in of_round if isinstance(e, Dealt)),
    }


async def poll(ask: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while True:
        found = await ask()
        if done(found):
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}: last {found}"
        await asyncio.sleep(0.2)


async def test_an_ended_sessions_round_settles_once_by_each_policy_and_resume_shows_it(
    stack: Stack,
    kafka: Cluster,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = uuid.uuid4().hex[:6]
    async with (
        Operator(kafka.admin, stack.topics) as admin,
        Operator(kafka.operator, stack.topics) as operator,
    ):
        players: dict[TimeoutPolicy, Player] = {}
        rounds: dict[TimeoutPolicy, tuple[Round, Dealt]] = {}
        for policy in TimeoutPolicy:
            await admin.create_table(f"{run}-{policy}", table(policy))
            player = Player(operator, f"s-{run}-{policy}", table_id=f"{run}-{policy}")
            await player.deposit(100_000)
            placed = await player.bet(ANTE)
            players[policy], rounds[policy] = player, (placed, await placed.dealt())
        # The idle table: 2 s without a command from the player ends his session.
        await admin.create_table(f"{run}-idle", table(TimeoutPolicy.CALL, idle_s=2))
        idler = Player(operator, f"s-{run}-idle", table_id=f"{run}-idle")
        await idler.deposit(100_000)
        idle_round = await idler.bet(ANTE)
        await idle_round.dealt()

        # Resume: the open round, only the cards the player may see, and its session.
        async with QueryClient(kafka.operator, stack.topics) as client:
            for policy, player in players.items():
                dealt = rounds[policy][1]
                reply: OpenRoundReply = await poll(
                    lambda p=player: client.open_round(p.player_id),
                    lambda r: r.open_round is not None and r.open_round.state == "dealt",
                    f"{player.player_id}'s open round",
                )
                view = reply.open_round
                assert view is not None and view.round_id == rounds[policy][0].round_id
                assert view.session_id is not None and view.session_id == dealt.session_id
                assert (view.player_cards, view.flop) == (dealt.player_cards, dealt.flop)
                assert (view.turn, view.river, view.dealer_cards) == (None, None, ())
                assert view.deck is None and view.salt is None and view.decision is None

        for policy, player in players.items():
            end_id = f"end-{player.player_id}"
            if policy is TimeoutPolicy.CALL:  # as an operator's shell would: the CLI
                for name, value in {
                    **kafka.operator.env(),
                    "HOLDEM_TOPIC_PREFIX": stack.prefix,
                }.items():
                    monkeypatch.setenv(name, value)
                argv = [player.player_id, str(player.table_id), "--command-id", end_id]
                assert await asyncio.to_thread(end_session_main, argv) == 0
                assert (
                    f"{player.player_id} at {player.table_id}: session" in capsys.readouterr().out
                )
            else:
                ended = await player.end_session(command_id=end_id)
                assert ended.reason is SessionEndReason.ENDED
            outcome = await rounds[policy][0].outcome()
            assert outcome.settled is not None
            # The same EndSession again: one effect, no answer; another one: no session.
            await operator.send(
                command(
                    EndSession,
                    player.player_id,
                    command_id=f"end-{player.player_id}",
                    table_id=player.table_id,
                )
            )
            with pytest.raises(Refused) as refused:
                await player.end_session()
            assert refused.value.reason is SessionRefusal.NO_SESSION

        idle_outcome = await idle_round.outcome()  # the idle timeout finished it (call)
        assert idle_outcome.settled is not None and idle_outcome.settled.decision == "call"
        again = await idler.bet(ANTE)  # a command after the idle timeout: a new session
        second_dealt = await again.dealt()
        again.close()

        await stack.assert_sound(*(p.player_id for p in players.values()), idler.player_id)

    for policy, player in players.items():
        events = [*stack.events(player.player_id), *stack.events(player.player_id, "wallet")]
        found = once_each(events, rounds[policy][0].round_id)
        dealt, decision = found["dealt"], found["decision"]
        assert found["started"].session_id == dealt.session_id == found["ended"].session_id
        assert found["ended"].command_id == f"end-{player.player_id}"
        assert isinstance(decision, expected_kind(policy, dealt)) and decision.auto
        refusals = [e.type for e in events if e.type == "round.session_rejected"]
        assert refusals == ["round.session_rejected"]  # the resend got none
    idle_events = stack.events(idler.player_id)
    ended = [e for e in idle_events if isinstance(e, SessionEnded)]
    started = [e for e in idle_events if isinstance(e, SessionStarted)]
    # Both sessions ended idle (the second while the invariants were checked), each once.
    assert [e.reason for e in ended] == [SessionEndReason.IDLE_TIMEOUT] * 2
    assert len(started) == 2 and second_dealt.session_id == started[1].session_id
    assert [e.session_id for e in ended] == [e.session_id for e in started]
    assert started[0].session_id != started[1].session_id


async def test_an_idle_timeout_running_when_the_dealer_is_killed_finishes_each_round_once(
    kafka: Cluster, topics: Topics, tmp_path: Path
) -> None:
    """kill -9 of the dealer while the sessions' idle timeouts run; they run out while it is
    down; the restarted dealer (from its snapshot and the log) ends each session and finishes
    its round by the round's policy, exactly once."""
    idle_s = 6
    prefix = topics.commands.removesuffix(".holdem.commands")
    extra = {"HOLDEM_SNAPSHOT_INTERVAL_S": "0.5", "HOLDEM_STUCK_AFTER_S": "120"}
    launcher = Launcher(
        kafka.bootstrap, tmp_path, prefix, 3, extra_env=extra, credentials=kafka.principals
    )
    run = uuid.uuid4().hex[:6]
    try:
        await launcher.start(["wallet", "dealer", "settlement"])
        async with (
            Operator(kafka.admin, topics) as admin,
            Operator(kafka.operator, topics) as operator,
        ):
            rounds: dict[TimeoutPolicy, tuple[Player, Round, Dealt]] = {}
            for policy in TimeoutPolicy:
                await admin.create_table(f"{run}-{policy}", table(policy, idle_s=idle_s))
                player = Player(operator, f"k-{run}-{policy}", table_id=f"{run}-{policy}")
                player.step_s = 180.0  # the restart waits out the dead member's session
                await player.deposit(100_000)
                placed = await player.bet(ANTE)
                rounds[policy] = (player, placed, await placed.dealt())
            dealer = launcher.services["dealer"]
            await asyncio.sleep(idle_s / 3)  # the idle timeouts run...
            dealer.kill()  # ...when the dealer dies
            assert not dealer.alive
            await asyncio.sleep(idle_s)  # and run out while it is down
            dealer.start()
            await dealer.wait_ready()
            outcomes = {p: await r.outcome() for p, (_, r, _) in rounds.items()}
            assert all(o.settled is not None for o in outcomes.values())
            await asyncio.sleep(2 * idle_s)  # time for a second decision, should there be one
        records = await read_run(kafka.admin, topics)
    finally:
        await launcher.stop()

    assert dealer.kills == 1 and dealer.starts == 2
    for policy, (player, placed, dealt) in rounds.items():
        events = [
            r.message
            for r in records
            if r.message is not None and getattr(r.message, "player_id", None) == player.player_id
        ]
        found = once_each(events, placed.round_id)
        assert found["ended"].reason is SessionEndReason.IDLE_TIMEOUT
        assert found["started"].session_id == dealt.session_id == found["ended"].session_id
        decision = found["decision"]
        assert isinstance(decision, expected_kind(policy, dealt)) and decision.auto
        assert decision.occurred_at >= dealt.occurred_at + timedelta(seconds=idle_s)
