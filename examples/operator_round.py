"""One round as an operator plays it: deposit, bet, read the deal, call, read the result."""

import asyncio

from holdem.client import Operator, Player


async def main() -> None:
    # Connects with HOLDEM_KAFKA_* (bootstrap, SASL, TLS) and HOLDEM_TOPIC_PREFIX from the env.
    async with Operator() as operator:
        alice = Player(operator, "alice", currency="EUR")
        funds = await alice.deposit(10_000)  # minor units: 100.00 EUR
        print("balance", funds.available)
        played = await alice.bet(ante=500, aa_bonus=250)  # Refused if the table says no
        dealt = await played.dealt()
        print("hole", *dealt.player_cards, "flop", *dealt.flop)
        await played.call()  # or played.fold()
        outcome = await played.outcome()  # Settled (or RoundVoided) and the final balance
        result = outcome.settled
        assert result is not None, f"round voided: {outcome.end}"
        print("result", result.result, "returned", result.total_return)
        print("balance", outcome.balance)


if __name__ == "__main__":
    asyncio.run(main())
