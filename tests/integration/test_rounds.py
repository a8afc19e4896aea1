"""Whole rounds through dealer, wallet and settlement on a real broker, audited after each test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from support.kafka import Cluster
from support.messages import command
from support.rounds import RoundEvents, deck_for
from support.stack import Stack

from holdem.core.contracts import (
    Call,
    Deposit,
    Fold,
    Malfunction,
    Message,
    PlaceBet,
    Reason,
    Settled,
    VoidRound,
    Withdraw,
)
from holdem.core.wire.topics import Topics

pytestmark = pytest.mark.kafka

FUNDS = 10_000
DEALER_FOURS = "4c4d"  # a pair of 4s: the weakest qualifying dealer hand, beaten by every row
# (hand, player cards, board, pays X to 1) — one row of the ante pay table each
PAY_ROWS = [
    ("royal_flush", "AsKs", "QsJsTs2c3d", 100),
    ("straight_flush", "9h8h", "7h6h5h2c3d", 20),
    ("four_of_a_kind", "9c9d", "9h9s2cKh5d", 10),
    ("full_house", "KcKd", "Kh7s7d2c3h", 3),
    ("flush", "Ah9h", "2h5hJhKc3d", 2),
    ("straight", "9c8d", "7h6s5cKd2h", 1),
]


@pytest.fixture(scope="module")
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    """One set of services for the module; each test plays with players of its own."""
    shared = Stack(kafka, Topics.unique("rounds"))
    await shared.open()
    try:
        yield shared
    finally:
        await shared.close()


def new_player() -> str:
    return f"p-{uuid.uuid4().hex[:10]}"


async def funded(stack: Stack, amount: int = FUNDS) -> str:
    player = new_player()
    await stack.send(command(Deposit, player, currency="EUR", amount=amount))
    await stack.event(player, "wallet.deposited")
    return player


async def dealt(
    stack: Stack, player: str, game: RoundEvents, ante: int = 10, aa_bonus: int = 0
) -> str:
    """Force the round's deck, place the bet and wait for the deal; returns the round id."""
    stack.decks.push(game.deck, game.salt)
    round_id = f"{player}-{uuid.uuid4().hex[:6]}"
    bet = command(PlaceBet, player, round_id=round_id, currency="EUR", ante=ante, aa_bonus=aa_bonus)
    await stack.send(bet)
    await stack.event(player, "round.dealt", round_id)
    return round_id


async def decide(stack: Stack, player: str, round_id: str, decision: type[Message]) -> None:
    await stack.send(command(decision, player, round_id=round_id))


async def play(
    stack: Stack, game: RoundEvents, decision: type[Message] = Call, **bets: int
) -> tuple[str, Settled]:
    """A funded player plays one round to its Settled; returns the player and the Settled."""
    player = await funded(stack)
    round_id = await dealt(stack, player, game, **bets)
    await decide(stack, player, round_id, decision)
    settled: Settled = await stack.event(player, "round.settled", round_id)
    return player, settled


@pytest.mark.parametrize(("hand", "cards", "board", "pays"), PAY_ROWS, ids=[r[0] for r in PAY_ROWS])
async def test_a_player_who_beats_a_qualifying_dealer_is_paid_by_the_ante_pay_table(
    stack: Stack, hand: str, cards: str, board: str, pays: int
) -> None:
    player, settled = await play(stack, RoundEvents(deck=deck_for(cards, DEALER_FOURS, board)))

    assert (settled.result, settled.dealer_qualifies, settled.player_category) == (
        "win",
        True,
        hand,
    )
    assert (settled.ante_return, settled.call_return) == (10 * (1 + pays), 40)
    payout = await stack.event(player, "wallet.payout_credited")
    assert payout.amount == settled.total_return == 10 * (1 + pays) + 40
    await stack.assert_sound(player)


async def test_a_dealer_who_does_not_qualify_pays_the_ante_and_pushes_the_call(
    stack: Stack,
) -> None:
    game = RoundEvents(deck=deck_for("AcAd", "KcQd", "2h7s9dJs3c"))
    player, settled = await play(stack, game)

    assert (settled.result, settled.dealer_qualifies) == ("win", False)
    assert (settled.ante_return, settled.call_return, settled.total_return) == (20, 20, 40)
    await stack.assert_sound(player)


async def test_a_tie_pushes_ante_and_call(stack: Stack) -> None:
    player, settled = await play(stack, RoundEvents(deck=deck_for("2c3d", "2d3c", "AhKsQdJcTh")))

    assert (settled.result, settled.total_return) == ("push", 30)
    await stack.assert_sound(player)


async def test_a_dealer_win_takes_ante_and_call(stack: Stack) -> None:
    player, settled = await play(stack, RoundEvents(deck=deck_for("2c7d", "AsAh", "KdQc9s4h3d")))

    assert (settled.result, settled.total_return) == ("lose", 0)
    await stack.assert_sound(player)
    assert stack.balances(player)[(player, "EUR", "real")] == (FUNDS - 30, 0)


async def test_a_fold_loses_the_ante_and_releases_the_call_hold(stack: Stack) -> None:
    game = RoundEvents(deck=deck_for("2c7d", "AsAh", "KdQc9s4h3d"))
    player, settled = await play(stack, game, Fold)

    assert (settled.result, settled.call, settled.total_return) == ("fold", 0, 0)
    assert (await stack.event(player, "wallet.call_released")).amount == 20
    await stack.assert_sound(player)


async def test_a_winning_aa_bonus_is_lost_when_the_player_folds(stack: Stack) -> None:
    player, settled = await play(stack, RoundEvents(), Fold, aa_bonus=5)  # As Ad + Ah on the flop

    assert settled.bonus_class == "aces_to_straight"
    assert (settled.bonus_return, settled.total_return) == (0, 0)
    await stack.assert_sound(player)


async def test_a_winning_aa_bonus_is_paid_when_the_player_calls(stack: Stack) -> None:
    player, settled = await play(stack, RoundEvents(), Call, aa_bonus=5)

    assert (settled.bonus_return, settled.total_return) == (40, 80)
    await stack.assert_sound(player)


async def test_bets_above_the_table_maximum_are_auto_adjusted(stack: Stack) -> None:
    player, settled = await play(stack, RoundEvents(), Fold, ante=5_000, aa_bonus=900)
    placed = await stack.event(player, "round.bet_placed")

    assert (placed.ante, placed.aa_bonus, placed.adjusted) == (1_000, 500, True)
    assert (placed.requested_ante, placed.requested_aa_bonus) == (5_000, 900)
    assert (settled.ante, settled.aa_bonus) == (1_000, 500)
    await stack.assert_sound(player)


async def test_a_bet_the_player_cannot_cover_with_the_call_is_rejected(stack: Stack) -> None:
    player = await funded(stack, 100)
    bet = command(PlaceBet, player, round_id=f"{player}-r", currency="EUR", ante=50)
    await stack.send(bet)

    rejected = await stack.event(player, "round.bet_rejected")
    assert rejected.reason == Reason.INSUFFICIENT_FUNDS
    await stack.assert_sound(player)
    assert stack.balances(player)[(player, "EUR", "real")] == (100, 0)
    assert "round.bet_placed" not in [e.type for e in stack.events(player)]


async def test_a_round_that_breaks_before_its_deal_is_voided_and_never_dealt(
    stack: Stack,
) -> None:
    player = await funded(stack)
    await stack.stop("dealer")
    round_id = f"{player}-r"
    await stack.send(command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10))
    placed = await stack.event(player, "round.bet_placed", round_id)
    broken = Malfunction(
        **RoundEvents(player_id=player, round_id=round_id).envelope("m", 1),
        source="watchdog",
        reason="no deal",
    )
    await stack.send(broken, "rounds")
    await stack.start("dealer")

    voided = await stack.event(player, "round.voided", round_id)
    assert voided.malfunction_id == broken.event_id
    assert (await stack.event(player, "wallet.stakes_refunded")).amount == placed.ante
    await stack.assert_sound(player)
    assert "round.dealt" not in [e.type for e in stack.events(player)]


async def test_a_round_voided_after_the_deal_refunds_the_stakes(stack: Stack) -> None:
    player = await funded(stack)
    round_id = await dealt(stack, player, RoundEvents(), aa_bonus=5)
    await stack.send(command(VoidRound, player, round_id=round_id))

    await stack.event(player, "round.voided", round_id)
    assert (await stack.event(player, "wallet.stakes_refunded")).amount == 15
    await decide(stack, player, round_id, Call)
    refused = await stack.event(player, "round.command_rejected", round_id)
    assert refused.reason == Reason.ROUND_CLOSED
    await stack.assert_sound(player)
    assert stack.balances(player)[(player, "EUR", "real")] == (FUNDS, 0)


async def test_a_round_voided_after_the_call_refunds_the_call_too(stack: Stack) -> None:
    player = await funded(stack)
    round_id = await dealt(stack, player, RoundEvents(), aa_bonus=5)
    await stack.stop("settlement")  # so the void reaches settlement before it could settle
    await decide(stack, player, round_id, Call)
    await stack.event(player, "round.called", round_id)
    await stack.send(command(VoidRound, player, round_id=round_id))
    await stack.event(player, "round.malfunction", round_id)
    await stack.start("settlement")

    await stack.event(player, "round.voided", round_id)
    assert (await stack.event(player, "wallet.stakes_refunded")).amount == 35
    await stack.assert_sound(player)
    assert "round.settled" not in [e.type for e in stack.events(player)]


async def test_every_command_delivered_twice_takes_effect_once(stack: Stack) -> None:
    player = new_player()
    deposit = command(Deposit, player, currency="EUR", amount=FUNDS)
    await stack.send(deposit)
    await stack.send(deposit)
    stack.decks.push(RoundEvents().deck, RoundEvents().salt)
    round_id = f"{player}-r"
    bet = command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10, aa_bonus=5)
    await stack.send(bet)
    await stack.send(bet)
    await stack.event(player, "round.dealt", round_id)
    call = command(Call, player, round_id=round_id)
    await stack.send(call)
    await stack.send(call)

    await stack.event(player, "wallet.payout_credited", round_id)
    await stack.assert_sound(player)
    kinds = [r.message.type for r in stack.records(player) if r.role != "commands"]
    for once in ("wallet.deposited", "round.bet_placed", "round.called", "round.settled"):
        assert kinds.count(once) == 1, kinds


@pytest.mark.parametrize("service", ["wallet", "dealer", "settlement"])
async def test_a_service_restarted_mid_round_rebuilds_its_state_and_completes_the_round(
    stack: Stack, service: str
) -> None:
    player = await funded(stack)
    round_id = await dealt(stack, player, RoundEvents(), aa_bonus=5)
    # Everything so far is below each service's committed offset: only a replay brings it back.
    await stack.wait_for(lambda: _settlement_knows(stack, player, round_id), "settlement's fold")
    await stack.restart(service)
    await decide(stack, player, round_id, Call)

    settled = await stack.event(player, "round.settled", round_id)
    assert settled.total_return == 80
    assert (await stack.event(player, "wallet.payout_credited", round_id)).amount == 80
    await stack.assert_sound(player)


def _settlement_knows(stack: Stack, player: str, round_id: str) -> bool:
    round_ = stack.services["settlement"].processor.state_for(player).round(player, round_id)
    return round_ is not None and round_.dealt is not None


async def test_the_after_test_audit_fails_on_a_forged_second_payout(stack: Stack) -> None:
    player, _ = await play(stack, RoundEvents(), Call, aa_bonus=5)
    await stack.assert_sound(player)
    payout = await stack.event(player, "wallet.payout_credited")
    await stack.send(payout.model_copy(update={"event_id": "forged"}), "wallet")

    with pytest.raises(AssertionError, match="applied 2 times"):
        await stack.assert_sound(player, timeout=3)


async def test_a_command_id_is_scoped_per_player_and_owning_service(stack: Stack) -> None:
    """ADR 022: within the dealer's commands, or within the wallet's, a reused command_id with
    another command is refused ``duplicate`` once and changes nothing; the two services' commands
    are two scopes, so the wallet credits a Deposit that reuses a Call's id."""
    player = new_player()
    await stack.send(command(Deposit, player, command_id="dep-1", currency="EUR", amount=FUNDS))
    await stack.event(player, "wallet.deposited")
    round_id = await dealt(stack, player, RoundEvents())
    await stack.send(command(Call, player, command_id="dec-1", round_id=round_id))
    await stack.event(player, "round.settled", round_id)

    await stack.send(command(Fold, player, command_id="dec-1", round_id=round_id))
    refused = await stack.event(player, "round.command_rejected", round_id)
    assert (refused.reason, refused.command_type) == (Reason.DUPLICATE, "command.fold")
    await stack.send(command(Withdraw, player, command_id="dep-1", currency="EUR", amount=1))
    refused = await stack.event(player, "wallet.rejected")
    assert (refused.reason, refused.command_type) == (Reason.DUPLICATE, "command.withdraw")

    await stack.send(command(Deposit, player, command_id="dec-1", currency="EUR", amount=100))

    def deposits() -> list[int]:
        return [e.amount for e in stack.events(player, "wallet") if e.type == "wallet.deposited"]

    await stack.wait_for(lambda: len(deposits()) == 2, "the second scope's deposit")
    assert deposits() == [FUNDS, 100]
    kinds = [e.type for e in stack.events(player, "wallet")]
    assert "wallet.withdrawn" not in kinds and kinds.count("wallet.rejected") == 1
    await stack.assert_sound(player)
