"""``holdem sim``, the Monte Carlo check of the game math: deal, decide and settle rounds
through the real core.

Each round shuffles a fresh deck (``deck.shuffle``: Fisher–Yates on the OS CSPRNG), deals it,
asks a strategy, and settles with ``rules.settle``, exactly as the services do. The observed
RTPs come with 95% confidence intervals to hold against the exact enumeration (``rtp``).
"""

from __future__ import annotations

import argparse
import math
import random
import secrets
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction

from holdem.core.cards import FULL_DECK
from holdem.core.deck import RandBelow, deal, shuffle
from holdem.core.rules import settle
from holdem.core.strategy import STRATEGIES, Decide
from holdem.math.rtp import from_totals, optimal_totals, report, strategy_calls

Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclass
class Tally:
    """Running sums of wagers and returns, enough for ratio estimates and their variance."""

    rounds: int = 0
    calls: int = 0
    sums: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("w", "r", "ww", "rr", "rw", "b", "bb", "br"), 0)
    )

    def add(self, wagered: int, returned: int, bonus: int, bonus_returned: int) -> None:
        s = self.sums
        s["w"] += wagered
        s["r"] += returned
        s["ww"] += wagered * wagered
        s["rr"] += returned * returned
        s["rw"] += returned * wagered
        s["b"] += bonus
        s["bb"] += bonus_returned * bonus_returned
        s["br"] += bonus_returned
        self.rounds += 1

    def main_rtp(self) -> tuple[float, float]:
        """Observed total returned / total wagered and its 95% half-width (delta method)."""
        s, n = self.sums, self.rounds
        ratio = s["r"] / s["w"]
        # variance of the mean of R - ratio * W, divided by mean(W)^2
        spread = (s["rr"] - 2 * ratio * s["rw"] + ratio * ratio * s["ww"]) / n
        return ratio, Z95 * math.sqrt(max(spread, 0.0) / n) / (s["w"] / n)

    def bonus_rtp(self) -> tuple[float, float]:
        """Observed AA Bonus returned / wagered and its 95% half-width (the stake is fixed)."""
        s, n = self.sums, self.rounds
        stake = s["b"] / n
        mean = s["br"] / n / stake
        variance = (s["bb"] / n / stake**2 - mean * mean) * n / max(n - 1, 1)
        return mean, Z95 * math.sqrt(max(variance, 0.0) / n)


def simulate(
    rounds: int,
    decide: Decide,
    ante: int = 1,
    bonus: int = 1,
    randbelow: RandBelow = secrets.randbelow,
    progress: bool = False,
) -> Tally:
    """Play ``rounds`` rounds with ``decide`` and tally what was wagered and returned."""
    tally = Tally()
    step = max(rounds // 100, 1)
    for done in range(1, rounds + 1):
        cards = deal(shuffle(FULL_DECK, randbelow))
        decision = decide(cards.player, cards.flop)
        outcome = settle(cards.player, cards.dealer, cards.board, ante, bonus, decision)
        called = decision == "call"
        tally.calls += called
        wagered = ante * (3 if called else 1)
        tally.add(wagered, outcome.ante_return + outcome.call_return, bonus, outcome.bonus_return)
        if progress and done % step == 0:
            print(f"\rsimulating {done / rounds:4.0%}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return tally


def exact_figures(strategy: str) -> tuple[Fraction, Fraction, Fraction]:
    """(main RTP, AA Bonus RTP, call frequency) of ``strategy``, exact, from the cached
    enumeration's per-situation totals (``rtp.optimal_totals``; computed once if missing)."""
    enum = from_totals(optimal_totals())
    figures = report(enum, strategy_calls(enum, strategy), strategy)
    return figures.main_rtp, figures.bonus_rtp, figures.call_frequency


def _line(name: str, observed: float, half: float, exact: Fraction | None) -> str:
    text = f"{name:15} {observed:.4%} ± {half:.4%} (95% CI {observed - half:.4%} .. "
    text += f"{observed + half:.4%})"
    if exact is not None:
        inside = "inside" if abs(observed - float(exact)) <= half else "OUTSIDE"
        text += f"   exact {float(exact):.4%} ({inside} the CI)"
    return text


def sim_main(argv: list[str] | None = None) -> int:
    """``holdem sim``: simulate rounds and print observed RTPs beside the exact figures."""
    parser = argparse.ArgumentParser(prog="holdem sim", description=sim_main.__doc__)
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--strategy", choices=list(STRATEGIES), default="optimal")
    parser.add_argument("--ante", type=int, default=1, help="ante stake, minor units")
    parser.add_argument("--bonus", type=int, default=1, help="AA Bonus stake, minor units")
    parser.add_argument(
        "--seed", type=int, help="reproducible non-cryptographic shuffle, for tests only"
    )
    parser.add_argument("--no-exact", action="store_true", help="skip the exact figures")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.ante < 1 or args.bonus < 0:
        parser.error("--rounds and --ante must be positive, --bonus not negative")
    randbelow = secrets.randbelow if args.seed is None else random.Random(args.seed).randrange
    decide = STRATEGIES[args.strategy]
    decide(FULL_DECK[:2], FULL_DECK[2:5])  # load the optimal table before the clock starts
    start = time.perf_counter()
    tally = simulate(args.rounds, decide, args.ante, args.bonus, randbelow, progress=True)
    seconds = time.perf_counter() - start
    exact = (None, None, None) if args.no_exact else exact_figures(args.strategy)
    source = "CSPRNG (secrets)" if args.seed is None else f"seeded PRNG {args.seed}"
    print(f"{tally.rounds:,} rounds, strategy {args.strategy}, ante {args.ante}, ", end="")
    print(f"bonus {args.bonus}, shuffle {source}")
    print(_line("main game RTP", *tally.main_rtp(), exact[0]))
    if args.bonus:
        print(_line("AA bonus RTP", *tally.bonus_rtp(), exact[1]))
    print(f"{'call frequency':15} {tally.calls / tally.rounds:.4%}", end="")
    print("" if exact[2] is None else f"   exact {float(exact[2]):.4%}")
    print(f"{tally.rounds / seconds:,.0f} rounds/s ({seconds:.1f} s)")
    return 0
