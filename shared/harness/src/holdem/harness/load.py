"""Players through Kafka as an operator drives them: bet, read the deal, decide, get the result."""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from holdem.client import Operator, Player, Refused, Round, StalledError, Voided
from holdem.core.cards import Card
from holdem.core.contracts import Dealt, Message, Reason, RoundVoided, Settled
from holdem.core.rules import STANDARD
from holdem.core.strategy import Decide
from holdem.math.sim import Tally as SimTally

CALL_MULTIPLE = STANDARD.call_multiple  # the call is 2 × ante: held back at bet time


@dataclass(frozen=True)
class Plan:
    """What to play: how many rounds, by how many players at once, with which stakes."""

    rounds: int
    players: int = 16
    ante: int = 500  # minor units
    aa_bonus: int = 250
    voids: int = 0  # rounds the operator voids after the deal, to show void-and-refund
    currency: str = "EUR"
    step_s: float = 60.0  # bound on every wait for an answer
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def player_ids(self) -> list[str]:
        return [f"demo-{self.tag}-p{n:03d}" for n in range(self.players)]

    def voided_rounds(self) -> frozenset[int]:
        """Round numbers spread evenly over the run that the operator voids."""
        count = min(self.voids, self.rounds)
        return frozenset(int((k + 0.5) * self.rounds / count) for k in range(count))

    def deposit(self) -> int:
        """Enough for one player to lose every round of the run, so no bet is ever refused:
        players take the next round when free, so a fast one may play far more than its share."""
        return (self.ante + self.aa_bonus + CALL_MULTIPLE * self.ante) * self.rounds


@dataclass
class Tally:
    """What the load saw: results, money in and out per bet, timing, stalls."""

    outcomes: Counter[str] = field(default_factory=Counter)  # win/lose/push/fold/voided/...
    main_wagered: int = 0  # ante + call of settled rounds
    main_returned: int = 0
    bonus_wagered: int = 0
    bonus_returned: int = 0
    returns: SimTally = field(default_factory=SimTally)  # per-round sums for the RTPs' CIs
    operator_voids: int = 0
    stalled: list[str] = field(default_factory=list)
    # Decisions the dealer refused already_decided because the table's timeout policy decided
    # first (a slow or overloaded machine): the round still ends, by that policy.
    late_decisions: int = 0
    latencies: list[float] = field(default_factory=list)  # PlaceBet sent → result read, s
    open: int = 0  # rounds whose bet was sent and whose result is not read yet
    # (settled rounds, observed main-game RTP, its 95% half-width) after each settled round
    trajectory: list[tuple[int, float, float]] = field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0

    @property
    def rounds(self) -> int:
        """Rounds that ended: settled or voided (rejected and stalled bets are not rounds)."""
        return sum(self.outcomes[k] for k in ("win", "lose", "push", "fold", "voided"))

    @property
    def seconds(self) -> float:
        return max(self.finished - self.started, 1e-9)

    def record(self, end: Message) -> None:
        if isinstance(end, Settled):
            self.outcomes[end.result] += 1
            self.main_wagered += end.ante + end.call
            self.main_returned += end.ante_return + end.call_return
            self.bonus_wagered += end.aa_bonus
            self.bonus_returned += end.bonus_return
            main = (end.ante + end.call, end.ante_return + end.call_return)
            self.returns.add(*main, end.aa_bonus, end.bonus_return)
            if self.returns.rounds >= 2:
                self.trajectory.append((self.returns.rounds, *self.returns.main_rtp()))
        elif isinstance(end, RoundVoided):
            self.outcomes["voided"] += 1


def player_of(operator: Operator, plan: Plan, player_id: str) -> Player:
    return Player(operator, player_id, plan.currency, step_s=plan.step_s)


async def fund(operator: Operator, plan: Plan) -> None:
    """One Deposit per player, each confirmed by its FundsDeposited (RuntimeError if refused)."""

    async def one(player_id: str) -> None:
        try:
            await player_of(operator, plan, player_id).deposit(plan.deposit())
        except Refused as refused:
            raise RuntimeError(f"deposit for {player_id} refused: {refused.event}") from None

    await asyncio.gather(*(one(p) for p in plan.player_ids()))


async def play(
    operator: Operator,
    plan: Plan,
    decide: Decide,
    stop: asyncio.Event | None = None,
    tally: Tally | None = None,
) -> Tally:
    """Play ``plan.rounds`` rounds with ``plan.players`` players at once; ``stop`` ends the load
    early (rounds in flight still finish). ``tally`` lets a caller watch it fill up."""
    tally = tally or Tally()
    tally.started = time.monotonic()
    numbers = iter(range(plan.rounds))  # shared: each player takes the next round number
    voids = plan.voided_rounds()
    stop = stop or asyncio.Event()

    async def player(player_id: str) -> None:
        for number in numbers:
            if stop.is_set():
                return
            round_id = f"{player_id}-r{number:06d}"
            await play_round(operator, plan, player_id, round_id, decide, number in voids, tally)

    await asyncio.gather(*(player(p) for p in plan.player_ids()))
    tally.finished = time.monotonic()
    return tally


@asynccontextmanager
async def under_load(
    operator: Operator, plan: Plan, decide: Decide, tally: Tally, drain_s: float
) -> AsyncIterator[Tally]:
    """The plan's players funded and playing while the block runs (a fault, an upgrade);
    at its end the load stops and the rounds in flight finish within ``drain_s``."""
    await fund(operator, plan)
    stop = asyncio.Event()
    load = asyncio.create_task(play(operator, plan, decide, stop, tally))
    try:
        yield tally
    finally:
        stop.set()
        async with asyncio.timeout(drain_s):
            await load


async def play_round(
    operator: Operator,
    plan: Plan,
    player_id: str,
    round_id: str,
    decide: Decide,
    void: bool,
    tally: Tally,
) -> None:
    """Bet, read the deal, decide (or void), and record the round's result."""
    tally.open += 1
    try:
        await _round(player_of(operator, plan, player_id), plan, round_id, decide, void, tally)
    finally:
        tally.open -= 1


async def _round(
    player: Player, plan: Plan, round_id: str, decide: Decide, void: bool, tally: Tally
) -> None:
    sent = time.monotonic()
    try:
        played = await player.bet(plan.ante, plan.aa_bonus, round_id=round_id)
    except Refused as refused:
        tally.outcomes[f"rejected:{refused.reason.value}"] += 1
        return
    except StalledError as stalled:
        tally.stalled.append(str(stalled))
        return
    try:
        try:
            await _decide(played, decide, void, tally)
        except Refused as refused:
            if refused.reason != Reason.ALREADY_DECIDED:
                raise
            tally.late_decisions += 1
        # The player's seat is free once the wallet has moved the round's last money.
        outcome = await played.outcome()
        tally.record(outcome.end)
        tally.latencies.append(time.monotonic() - sent)
    except (StalledError, Refused) as failed:
        tally.stalled.append(str(failed))
    finally:
        played.close()


async def _decide(played: Round, decide: Decide, void: bool, tally: Tally) -> None:
    """The player's Call or Fold for this deal, or the operator's VoidRound."""
    try:
        dealt = await played.dealt()
    except Voided:
        return  # voided before the deal (the watchdog's): outcome() reads the refund
    if void:
        tally.operator_voids += 1
        await played.void("demo")
    elif _choice(dealt, decide) == "call":
        await played.call()
    else:
        await played.fold()


def _choice(dealt: Dealt, decide: Decide) -> str:
    hole = [Card.parse(text) for text in dealt.player_cards]
    flop = [Card.parse(text) for text in dealt.flop]
    return decide(hole, flop)


def percentile(values: list[float], share: float) -> float:
    """The value below which ``share`` of ``values`` lie (nearest rank); 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]
