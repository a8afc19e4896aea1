"""`holdem play`: a terminal table for a person, playing through the SDK against the services."""

from __future__ import annotations

import argparse
import asyncio
import getpass
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiokafka.errors import KafkaError
from rich.console import Console
from rich.markup import escape

from holdem.client.operator import Operator
from holdem.client.play_view import (
    TableInfo,
    deal_view,
    free_hands_lines,
    history_view,
    money,
    parse_stake,
    result_view,
    reveal_view,
    table_line,
)
from holdem.client.player import FreeHands, Outcome, Player, Refused, Round, Voided
from holdem.client.watch import StalledError
from holdem.core.wire.connection import ConnectionConfigError, KafkaConnection
from holdem.core.wire.topics import topics_from_env

MENU = "[b]et, [r]ebet, [f]ree hand, [d]eposit, [h]istory, [q]uit"


class Quit(Exception):
    """The person left the table (q, Ctrl-D or Ctrl-C at a prompt)."""


@dataclass
class Session:
    """One person at the table: their balance, last bets (for rebet) and rounds played."""

    player: Player
    table: TableInfo
    console: Console
    balance: int = 0
    last_bets: tuple[int, int] | None = None
    history: list[Outcome] = field(default_factory=list)
    campaigns: list[FreeHands] = field(default_factory=list)  # free hands (ADR 029)

    async def ask(self, prompt: str, default: str = "") -> str:
        """One line typed by the person; the event loop keeps reading Kafka meanwhile."""
        shown = escape(f"{prompt} [{default}]: " if default else f"{prompt}: ")
        try:
            answer = await asyncio.to_thread(self.console.input, shown)
        except (EOFError, KeyboardInterrupt):
            raise Quit from None
        return answer.strip() or default

    def show_balance(self) -> None:
        currency = self.table.currency
        self.console.print(f"Balance: [bold]{money(self.balance, currency)} {currency}[/bold]")

    async def stake(self, name: str, default: int) -> int:
        while True:
            try:
                currency = self.table.currency
                return parse_stake(await self.ask(name, money(default, currency)), currency)
            except ValueError as wrong:
                self.console.print(f"[red]{wrong}[/red]")

    async def deposit(self) -> None:
        amount = await self.stake("Deposit", 100 * self.table.limits.chips[0])
        try:
            self.balance = (await self.player.deposit(amount)).available
        except Refused as refused:
            self.console.print(f"[red]Deposit refused: {refused.reason.value}[/red]")
        self.show_balance()

    async def bet(self, bets: tuple[int, int] | None = None) -> None:
        """Place ante and AA Bonus (or repeat ``bets``), decide, and show the outcome."""
        if bets is None:
            ante = await self.stake("Ante", self.table.limits.ante_min)
            bets = (ante, await self.stake("AA Bonus", 0))
        self.last_bets = bets
        await self._play(lambda: self.player.bet(*bets))

    async def free_hand(self) -> None:
        """Play the next free hand of the first campaign with hands left."""
        campaign = next((c for c in self.campaigns if c.remaining), None)
        if campaign is None:
            self.console.print("No free hands.")
            return
        outcome = await self._play(lambda: self.player.play_free_hand(campaign.campaign_id))
        self.campaigns = await self.player.free_hands()
        if outcome is not None and outcome.paid is not None:
            paid = money(outcome.paid, self.table.currency)
            self.console.print(f"Free hand paid {paid} (winnings; the free stake is the house's).")
        self.show_free_hands()

    def show_free_hands(self) -> None:
        for line in free_hands_lines(self.campaigns):
            self.console.print(line)

    async def _play(self, start: Callable[[], Awaitable[Round]]) -> Outcome | None:
        try:
            played = await start()
        except Refused as refused:
            # The detail may be the operator's wallet's own text (seamless mode): not markup.
            detail = escape(refused.event.detail)
            self.console.print(f"[red]Bet refused: {refused.reason.value} {detail}[/red]")
            return None
        try:
            await self._decide(played)
            outcome = await played.outcome()
        except (Refused, StalledError) as failed:
            self.console.print(f"[red]The round did not end as expected: {failed}[/red]")
            return None
        finally:
            played.close()
        self._show(outcome)
        return outcome

    async def _decide(self, played: Round) -> None:
        try:
            dealt = await played.dealt()
        except Voided as voided:
            self.console.print(f"[yellow]{voided}[/yellow]")
            return
        placed = played.placed
        if placed.adjusted:
            self.console.print("[yellow]Bets lowered to the table maximum.[/yellow]")
        self.balance = placed_balance(self.balance, placed.ante, placed.aa_bonus, placed.call_hold)
        cur = placed.currency
        on_table = f"ante {money(placed.ante, cur)}, AA Bonus {money(placed.aa_bonus, cur)}"
        self.console.print(f"On the table: {on_table}; balance {money(self.balance, cur)}")
        self.console.print(deal_view(dealt))
        call = money(placed.call_hold, cur)
        while (choice := (await self.ask(f"[c]all {call} or [f]old", "c")).lower()) not in "cf":
            self.console.print("c or f")
        await (played.call() if choice == "c" else played.fold())

    def _show(self, outcome: Outcome) -> None:
        self.history.append(outcome)
        self.balance = outcome.balance
        self.console.print(reveal_view(outcome))
        self.console.print(result_view(outcome, self.table.currency))
        self.show_balance()

    async def loop(self) -> None:
        while True:
            choice = (await self.ask(MENU, "b")).lower()[:1]
            if choice == "q":
                raise Quit
            if choice == "d":
                await self.deposit()
            elif choice == "h":
                self.console.print(history_view(self.history, self.table.currency))
            elif choice == "f":
                await self.free_hand()
            elif choice == "r" and self.last_bets is None:
                self.console.print("Nothing to repeat yet: place a bet first.")
            elif choice in "br":
                await self.bet(self.last_bets if choice == "r" else None)


def placed_balance(balance: int, ante: int, bonus: int, hold: int) -> int:
    """The balance while the round is open: stakes taken, the call held back."""
    return balance - ante - bonus - hold


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="holdem play", description=__doc__)
    parser.add_argument("--player", default=getpass.getuser(), help="your player id")
    parser.add_argument("--env-file", help="HOLDEM_KAFKA_* file, e.g. DIR/clients/operator.env")
    parser.add_argument(
        "--deposit", default="0", help="deposit on joining, in the table currency's units"
    )
    return parser.parse_args(argv)


async def run(args: argparse.Namespace, console: Console) -> None:
    if args.env_file:
        connection = KafkaConnection.from_file(args.env_file)
    else:
        connection = KafkaConnection.from_env()
    table = TableInfo.from_env()
    deposit = parse_stake(args.deposit, table.currency)  # a ValueError: main says what is wrong
    console.print(f"[bold]Casino Hold'em[/bold] at {connection.bootstrap}: {table_line(table)}")
    async with Operator(connection, topics_from_env()) as operator:
        player = Player(operator, args.player, table.currency)
        session = Session(player, table, console)
        session.balance = await operator.balance(args.player, table.currency) or 0
        console.print(f"Joined as [bold]{args.player}[/bold].")
        if deposit:
            try:
                session.balance = (await player.deposit(deposit)).available
            except Refused as refused:
                console.print(f"[red]Deposit refused: {refused.reason.value}[/red]")
        session.show_balance()
        session.campaigns = await player.free_hands()
        session.show_free_hands()
        try:
            await session.loop()
        except Quit:
            console.print(f"Bye. {len(session.history)} rounds played.")


def main(argv: list[str] | None = None) -> int:
    """0 when the person leaves; 1 with one line when the game cannot be reached."""
    args = parse_args(argv)
    console = Console(highlight=False)
    try:
        asyncio.run(run(args, console))
    except (KafkaError, ConnectionConfigError, StalledError, ValueError) as failed:
        console.print(f"[red]holdem play: cannot play: {type(failed).__name__}: {failed}[/red]")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
