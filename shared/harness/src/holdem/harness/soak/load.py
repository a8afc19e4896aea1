"""The soak's open-loop load: a round every 1/rate s on a free player, each step timed."""

from __future__ import annotations

import asyncio
import time

from holdem.client import Operator, Player, Voided
from holdem.core.cards import Card
from holdem.core.strategy import STRATEGIES, Decide
from holdem.harness.soak.config import ANTE, BONUS, MIXED, STEPS, TABLES, Config, Samples


class Load:
    """The open-loop load: a round every 1/rate s on a free player."""

    def __init__(self, operator: Operator, config: Config, samples: Samples, tag: str) -> None:
        self.config = config
        self.samples = samples
        self.players = [
            Player(
                operator,
                f"soak-{tag}-p{n:04d}",
                step_s=config.step_s,
                table_id=f"soak-{n % TABLES}",
            )
            # 1.5 s of rounds in flight (a round's p99 at this load is about 1.5 s); fewer
            # players fill the state's per-player bounds sooner (see the module's docstring)
            for n in range(max(16, int(config.rate * 1.5)))
        ]
        self.free = list(self.players)
        self.played: dict[str, int] = {}
        self.began = time.monotonic()
        self.tasks: set[asyncio.Task[None]] = set()

    def strategy(self, player: Player) -> tuple[Decide, int]:
        index = self.players.index(player)
        return STRATEGIES[MIXED[index % len(MIXED)]], BONUS if index % 2 == 0 else 0

    async def fund(self) -> None:
        minutes = self.config.warmup_minutes + self.config.minutes
        rounds_each = self.config.rate * minutes * 60 / len(self.players) * 3 + 100
        amount = int(rounds_each * (ANTE + BONUS + 2 * ANTE))
        await asyncio.gather(*(p.deposit(amount) for p in self.players))

    async def run(self, stop: asyncio.Event) -> None:
        number = 0
        started = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(max(0.0, started + number / self.config.rate - time.monotonic()))
            number += 1
            if not self.free:
                self.samples.not_offered += 1
                continue
            task = asyncio.create_task(self.one(self.free.pop(0), number))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        await asyncio.gather(*self.tasks)

    async def one(self, player: Player, number: int) -> None:
        try:
            await self.round(player, number)
            count = self.played[player.player_id] = self.played.get(player.player_id, 0) + 1
            if count % self.config.session_every == 0:
                await player.end_session()
        except Exception as error:  # counted and reported: the run goes on
            self.samples.failures.append(f"{type(error).__name__}: {error}"[:300])
        finally:
            self.free.append(player)

    async def round(self, player: Player, number: int) -> None:
        decide, bonus = self.strategy(player)
        clock = time.monotonic
        sent = clock()
        played = await player.bet(ANTE, bonus, round_id=f"{player.player_id}-r{number:07d}")
        try:
            try:
                dealt = await played.dealt()
            except Voided:
                dealt = None
            got = clock()
            if dealt is not None:
                if number % self.config.void_every == 0:
                    await played.void("soak")
                else:
                    hole = [Card.parse(c) for c in dealt.player_cards]
                    flop = [Card.parse(c) for c in dealt.flop]
                    await (played.call() if decide(hole, flop) == "call" else played.fold())
            outcome = await played.outcome()
        finally:
            played.close()
        ended = clock()
        kind = outcome.settled.result if outcome.settled else "voided"
        self.samples.outcomes[kind] = self.samples.outcomes.get(kind, 0) + 1
        self.samples.rounds += 1
        at = ended - self.began
        for step, seconds in zip(STEPS, (got - sent, ended - got, ended - sent), strict=True):
            self.samples.steps.setdefault(step, []).append((at, seconds))
