"""The demo's operator side without Kafka: a round's watch keeps early events, plans add up."""

from __future__ import annotations

import pytest
from support.queries import settled_of
from support.rounds import RoundEvents

from holdem.client import StalledError, Watch
from holdem.core.contracts import CallCaptured, Dealt, RoundVoided
from holdem.harness.load import Plan, Tally, percentile

GAME = RoundEvents()


def captured() -> CallCaptured:
    return CallCaptured(
        **GAME.envelope("capture", 3),
        idempotency_key="capture:r1",
        currency="EUR",
        amount=20,
        available=0,
        held=0,
    )


async def test_a_wallet_event_read_before_the_round_event_is_kept_for_the_next_wait() -> None:
    watch = Watch("round:r1")
    for event in (GAME.bet_placed(), captured(), GAME.dealt()):
        watch.queue.put_nowait(event)

    assert isinstance(await watch.until(Dealt, within_s=1), Dealt)
    assert isinstance(await watch.until(CallCaptured, within_s=1), CallCaptured)


async def test_a_terminal_event_ends_any_wait_and_silence_is_a_stall() -> None:
    watch = Watch("round:r1")
    voided = RoundVoided(**GAME.envelope("voided", 4), malfunction_id="m1", reason="test")
    watch.queue.put_nowait(voided)

    assert await watch.until(Dealt, within_s=1) == voided
    with pytest.raises(StalledError, match="no Dealt in 0s"):
        await watch.until(Dealt, within_s=0.1)


def test_voided_rounds_are_spread_over_the_run_and_deposits_cover_every_loss() -> None:
    plan = Plan(rounds=200, players=16, ante=500, aa_bonus=250, voids=4)

    assert sorted(plan.voided_rounds()) == [25, 75, 125, 175]
    assert plan.deposit() == (500 + 250 + 1000) * 200  # one player may play them all
    assert len(set(plan.player_ids())) == 16


def test_the_tally_counts_ended_rounds_only_and_percentiles_are_nearest_rank() -> None:
    tally = Tally()
    tally.outcomes.update({"win": 2, "fold": 1, "voided": 1, "rejected:below_minimum": 5})

    assert tally.rounds == 4
    assert percentile([3.0, 1.0, 2.0, 4.0], 0.5) == 2.0
    assert percentile([], 0.95) == 0.0


async def test_a_decision_the_timeout_policy_took_first_still_reads_the_rounds_end() -> None:
    """On a slow machine the table's timeout policy may decide before the player's Fold lands:
    the dealer refuses it already_decided and the round still ends (by the policy)."""
    from types import SimpleNamespace

    from holdem.client import Refused
    from holdem.core.contracts import CommandRejected, Reason
    from holdem.harness import load

    refusal = CommandRejected(
        **GAME.envelope("refused", 5),
        command_id="c1",
        command_type="command.fold",
        reason=Reason.ALREADY_DECIDED,
        detail="the round is already folded",
    )
    folded = settled_of(GAME, "fold")

    class Played:
        async def dealt(self) -> Dealt:
            return GAME.dealt()

        async def fold(self) -> None:
            raise Refused(refusal)

        async def call(self) -> None:
            raise Refused(refusal)

        async def outcome(self) -> object:
            return SimpleNamespace(end=folded)

        def close(self) -> None: ...

    class Seat:
        async def bet(self, *args: object, **kwargs: object) -> Played:
            return Played()

    tally = Tally()
    plan = Plan(rounds=1, players=1, ante=10, aa_bonus=0, voids=0)
    await load._round(Seat(), plan, "r1", lambda hole, flop: "fold", False, tally)  # type: ignore[arg-type]

    assert (tally.late_decisions, tally.stalled, tally.rounds) == (1, [], 1)
