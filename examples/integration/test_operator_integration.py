"""An operator's own integration test against the whole stack in containers (holdem.testing):
one round played through the SDK as the operator principal; the money adds up."""

from holdem.client import Player

pytest_plugins = ["holdem.testing.pytest_plugin"]  # the holdem_stack fixture


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
