"""An operator's own integration tests against the whole stack in containers (holdem.testing):
a round played through the SDK as the operator principal, and a rare path forced on demand."""

import pytest

from holdem.client import Player
from holdem.core.contracts import Mode

pytest_plugins = ["holdem.testing.pytest_plugin"]  # the holdem_stack fixture
pytestmark = pytest.mark.asyncio  # pytest-asyncio runs these async tests, with no pytest.ini

# Deal order: the player's two, the dealer's two (a pair of 4s: he qualifies), flop, turn, river.
ROYAL = ["As", "Ks", "4c", "4d", "Qs", "Js", "Ts", "2h", "7d"]


async def test_a_round_moves_exactly_its_stakes_and_returns(holdem_stack):
    async with holdem_stack.operator() as operator:
        bob = Player(operator, "integration-bob", currency="EUR")
        funds = await bob.deposit(10_000)
        played = await bob.bet(ante=500)
        await played.dealt()
        await played.call()  # ante 500 + call 1000 at stake
        outcome = await played.outcome()
        assert outcome.settled is not None, outcome.end
        assert outcome.balance == funds.available - 1_500 + outcome.settled.total_return


async def test_a_forced_royal_flush_pays_the_ante_100_to_1(holdem_stack):
    await holdem_stack.open_play_money_table("integration-fun")
    await holdem_stack.force_next_deck("integration-carol", ROYAL)
    async with holdem_stack.operator() as operator:
        carol = Player(operator, "integration-carol", table_id="integration-fun", mode=Mode.FUN)
        await carol.grant_fun(100_000)
        played = await carol.bet(ante=1_000)
        dealt = await played.dealt()
        assert dealt.forced and dealt.player_cards == ("As", "Ks")
        await played.call()
        result = (await played.outcome()).settled
        assert result is not None and result.result == "win"
        assert result.ante_return == 101 * 1_000  # 100:1 and the stake
        assert result.call_return == 2 * 2_000  # the call pays 1:1
