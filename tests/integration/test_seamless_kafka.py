"""The seamless wallet mode on a real broker (ADR 015): dealer, wallet (seamless) and settlement
as their principals, the reference operator wallet as the operator principal, answering with
silence, lost answers, duplicates and delays; the wallet is restarted while rounds are open.
The audit then finds every round settled or rolled back once, every debit ended once. And on a
reliable line: the operator's own refusal (a wager limit) reaches the player's client as its
code, and a bet at a table starts a session timed by that table's idle timeout (ADR 020)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from support.kafka import Cluster
from support.messages import command
from support.rounds import RoundEvents, deck_for
from support.seamless_stack import bridge
from support.stack import Stack
from support.tables import terms

from holdem.client.operator import Operator
from holdem.client.player import Player, Refused
from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import (
    BetPlaced,
    BetRejected,
    Call,
    Deposit,
    Fold,
    OperatorRefusal,
    PlaceBet,
    Reason,
    RoundClosed,
    SessionStarted,
    VoidRound,
    WalletRejected,
)
from holdem.core.contracts.seamless import CreditRequested, DebitRequested, SeamlessCredited

pytestmark = pytest.mark.kafka

OPENING = 10_000
IDLE_S = 123  # the table's idle timeout: not the dealer's default (900 s)
TABLE = terms(ante_min=100, decision_timeout_s=300, idle_timeout_s=IDLE_S)
TABLE_ANTE = 100
TABLE_DEBIT = 3 * TABLE_ANTE  # ante + the call hold (2 × ante), no AA Bonus
FAULTS = Faults(silence=0.15, drop=0.25, duplicate=0.4, max_delay=4)


@pytest.fixture
async def bridged(kafka: Cluster) -> AsyncIterator[tuple[Stack, FaultyOperator]]:
    operator = FaultyOperator(OperatorWallet(opening=OPENING), FAULTS, seed=11)
    async with bridge(kafka, operator) as stack:
        yield stack, operator


async def bet(stack: Stack, player: str) -> str:
    round_id = f"{player}-{uuid.uuid4().hex[:6]}"
    game = RoundEvents(deck=deck_for("AcAd", "KcQd", "2h7s9dJs3c"))  # the player wins
    stack.decks.push(game.deck, game.salt)
    await stack.send(
        command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10, aa_bonus=5)
    )
    return round_id


async def outcome(stack: Stack, player: str, round_id: str) -> str:
    """round.dealt or round.bet_rejected, whichever the wallet's bridge led to."""

    def first() -> str | None:
        kinds = {m.type for m in stack.events(player) if m.round_id == round_id}
        return next((k for k in ("round.dealt", "round.bet_rejected") if k in kinds), None)

    found: str = await stack.wait_for(first, f"the deal or refusal of {round_id}")
    return found


async def test_every_round_ends_once_and_every_debit_once_under_operator_faults(
    bridged: tuple[Stack, FaultyOperator],
) -> None:
    stack, operator = bridged
    players = [f"s-{uuid.uuid4().hex[:8]}-{n}" for n in range(8)]
    rounds = {player: await bet(stack, player) for player in players}
    await asyncio.sleep(0.5)
    await stack.restart("wallet")  # debits and credits in flight: rebuilt from snapshot and log
    dealt = []
    for n, player in enumerate(players):
        if await outcome(stack, player, rounds[player]) != "round.dealt":
            continue
        dealt.append(player)
        decision = (Call, Fold, VoidRound)[n % 3]
        await stack.send(command(decision, player, round_id=rounds[player]))
    assert dealt, "no debit was answered in time: the faults are too harsh for the test"
    await stack.assert_sound(*players, timeout=60)  # also waits for every credit and rollback

    # What the operator's books say: each credited round cost its debit and paid its credit;
    # a rolled-back or refused round cost nothing.
    for player in players:
        records = [r.message for r in stack.records(player)]
        credited = {m.round_id for m in records if isinstance(m, SeamlessCredited)}
        debits = {m.round_id: m.amount for m in records if isinstance(m, DebitRequested)}
        credits = {m.round_id: m.amount for m in records if isinstance(m, CreditRequested)}
        expected = OPENING + sum(credits[r] - debits[r] for r in credited)
        assert operator.wallet.balance(player, "EUR") == expected, player
    assert sum(operator.stats.values()) > 0, "no fault was injected"
    # Each notice that reached the operator's wallet came once, after the round's money.
    assert set(operator.wallet.closes.values()) <= {1} and operator.wallet.out_of_order == []
    # Deposits are the operator's wallet's business in this mode.
    deposit = command(Deposit, players[0], currency="EUR", amount=100)
    await stack.send(deposit)

    def refusal() -> object:
        found = [m for m in stack.events(players[0], "wallet") if m.type == "wallet.rejected"]
        return next((m for m in found if m.command_id == deposit.command_id), None)

    assert "seamless" in (await stack.wait_for(refusal, "the deposit's refusal")).detail


async def test_the_operators_limit_reaches_the_player_and_a_tables_idle_timeout_its_session(
    kafka: Cluster,
) -> None:
    run = uuid.uuid4().hex[:8]
    limited, player = f"s-{run}-limited", f"s-{run}-idle"
    wallet = OperatorWallet(opening=OPENING, limits={(limited, "EUR"): 2 * TABLE_DEBIT})
    async with (
        bridge(kafka, FaultyOperator(wallet, Faults())) as stack,
        Operator(kafka.admin, stack.topics) as admin,
        Operator(kafka.operator, stack.topics) as operator,
    ):
        await admin.create_table(run, TABLE)
        first = await Player(operator, limited, table_id=run).bet(TABLE_ANTE)
        await first.dealt()
        await first.fold()
        await first.outcome()
        # The limit leaves room for one more round's stakes, not for a bigger bet.
        with pytest.raises(Refused) as refused:
            await Player(operator, limited, table_id=run).bet(2 * TABLE_ANTE)
        assert refused.value.reason is OperatorRefusal.LIMIT_EXCEEDED
        assert refused.value.event.detail.startswith("operator wallet: limit_exceeded wager limit")
        assert wallet.wagered[(limited, "EUR")] == TABLE_DEBIT  # the refused debit took nothing

        placed = await Player(operator, player, table_id=run).bet(TABLE_ANTE)
        await placed.dealt()
        await placed.fold()
        await placed.outcome()
        await stack.assert_sound(limited, player)

    [debit] = [m for m in stack.events(player, "wallet") if isinstance(m, DebitRequested)]
    assert (debit.version, debit.idle_timeout_s) == (3, IDLE_S)  # v3: a free hand's campaign
    [bet_placed] = [m for m in stack.events(player) if isinstance(m, BetPlaced)]
    [started] = [m for m in stack.events(player) if isinstance(m, SessionStarted)]
    assert bet_placed.idle_timeout_s == started.idle_timeout_s == IDLE_S
    [rejected] = [m for m in stack.events(limited) if isinstance(m, BetRejected)]
    assert (rejected.version, rejected.reason) == (4, OperatorRefusal.LIMIT_EXCEEDED)
    # Round closed (ADR 028): the operator's wallet was told once per round, after its credit.
    assert wallet.closes == {first.round_id: 1, placed.round_id: 1}
    assert wallet.out_of_order == []
    for who, round_id in ((limited, first.round_id), (player, placed.round_id)):
        [closed] = [m for m in stack.events(who) if isinstance(m, RoundClosed)]
        assert (closed.round_id, closed.outcome) == (round_id, "settled")
    [ledger] = [m for m in stack.events(limited, "wallet") if isinstance(m, WalletRejected)]
    assert ledger.reason is Reason.INSUFFICIENT_FUNDS  # wallet.rejected v2 keeps the fold
