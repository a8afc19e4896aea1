"""The battery's statistics on the tallies: chi-square, z and runs tests, Holm, second-level KS."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import stats

from holdem.core.cards import RANK_CHARS, HandCategory
from holdem.lab.rng import exact
from holdem.lab.rng.sampling import DECK, Counts

Array = npt.NDArray[np.float64]
MIN_EXPECTED = 5.0  # cells expected below this are pooled, the usual validity rule for chi-square


@dataclass
class Result:
    """One test's outcome; ``table`` holds (label, observed, expected) rows where they help."""

    group: str
    name: str
    statistic: float
    df: str
    pvalue: float
    table: list[tuple[str, int, float]] = field(default_factory=list)
    parts: list[float] = field(default_factory=list)  # raw p-values behind a min-p row


def chi_square(observed: npt.ArrayLike, probs: npt.ArrayLike) -> tuple[float, int, float]:
    """Pearson's chi-square of counts against probabilities; rare cells pooled (>= 5 expected).

    An outcome of probability zero that was observed fails outright (p = 0).
    """
    obs, p = np.asarray(observed, dtype=np.float64), np.asarray(probs, dtype=np.float64)
    if obs[p == 0].sum() > 0:
        return float("inf"), 0, 0.0
    obs, exp = obs[p > 0], p[p > 0] * obs.sum()
    # pool every cell expected below MIN_EXPECTED, growing the pool until it reaches it
    order = np.argsort(exp, kind="stable")
    take = int((exp < MIN_EXPECTED).sum())
    while 0 < take < len(order) and exp[order[:take]].sum() < MIN_EXPECTED:
        take += 1
    pool, rest = order[:take], order[take:]
    cells_o = np.append(obs[rest], obs[pool].sum()) if take else obs
    cells_e = np.append(exp[rest], exp[pool].sum()) if take else exp
    stat = float(((cells_o - cells_e) ** 2 / cells_e).sum())
    df = len(cells_o) - 1
    return stat, df, float(stats.chi2.sf(stat, df))


def goodness(
    group: str, name: str, observed: npt.ArrayLike, probs: Array, labels: list[str] | None = None
) -> Result:
    """A chi-square goodness-of-fit result, with the observed and expected counts kept."""
    obs = np.asarray(observed)
    stat, df, p = chi_square(obs, probs)
    rows = (
        [
            (lab, int(o), float(q * obs.sum()))
            for lab, o, q in zip(labels, obs, probs, strict=True)
            if q > 0 or o > 0
        ]
        if labels
        else []
    )
    return Result(group, name, stat, str(df), p, rows)


def min_p(group: str, name: str, pvalues: Array) -> Result:
    """The smallest of many p-values, Bonferroni-corrected for their number."""
    smallest = float(pvalues.min())
    return Result(
        group,
        name,
        smallest,
        f"min of {len(pvalues)}",
        min(1.0, smallest * len(pvalues)),
        parts=[float(x) for x in pvalues],
    )


def card_position(c: Counts) -> list[Result]:
    """52 x 52 card-by-position chi-square, then each card's and each position's distribution."""
    e = c.decks / DECK
    cells = (c.card_position - e) ** 2 / e
    whole = float(cells.sum())
    per_card = stats.chi2.sf(cells.sum(axis=1), DECK - 1)
    per_position = stats.chi2.sf(cells.sum(axis=0), DECK - 1)
    return [
        Result(
            "positions",
            "card x position (52 x 52)",
            whole,
            str((DECK - 1) ** 2),
            float(stats.chi2.sf(whole, (DECK - 1) ** 2)),
        ),
        min_p("positions", "each card's position distribution", per_card),
        min_p("positions", "each position's card distribution", per_position),
    ]


def adjacent_pairs(c: Counts) -> Result:
    """Which card follows which: 2,652 ordered pairs, N/52 each; a card never follows itself.

    Within a deck the 51 pairs are dependent: the statistic's exact mean is 51**2, so it is
    referred to chi-square with 2,601 df (a simulation of 300 runs agreed on mean and spread).
    """
    if np.trace(c.adjacent):
        return Result("independence", "adjacent-pair frequencies", float("inf"), "2601", 0.0)
    off = ~np.eye(DECK, dtype=bool)
    e = c.decks / DECK
    stat = float(((c.adjacent[off] - e) ** 2 / e).sum())
    return Result(
        "independence",
        "adjacent-pair frequencies",
        stat,
        "2601",
        float(stats.chi2.sf(stat, (DECK - 1) ** 2)),
    )


def position_pairs(c: Counts) -> Result:
    """Product of the card codes at two positions against its exact mean and variance: 1,326 z."""
    codes = np.arange(DECK, dtype=np.float64)
    s1, s2, s4 = codes.sum(), (codes**2).sum(), (codes**4).sum()
    pairs = DECK * (DECK - 1)
    mean = (s1**2 - s2) / pairs
    var = (s2**2 - s4) / pairs - mean**2
    i, j = np.triu_indices(DECK, 1)
    z = (c.cross[i, j] / c.decks - mean) / np.sqrt(var / c.decks)
    return min_p(
        "independence", "position-pair correlations (code products)", 2 * stats.norm.sf(np.abs(z))
    )


def hole_labels() -> list[str]:
    labels = []
    for row in range(13):
        for col in range(13):
            hi, lo = max(row, col), min(row, col)
            kind = "" if row == col else ("s" if row > col else "o")
            labels.append(RANK_CHARS[hi] + RANK_CHARS[lo] + kind)
    return labels


TEXTURES = [
    f"{r}, {s}" for r in ("trips", "pair", "no pair") for s in ("monotone", "two-tone", "rainbow")
]
CATEGORIES = [cat.key for cat in HandCategory]


def hands(c: Counts) -> list[Result]:
    """The dealt hands against exact probabilities, in the deal order of ``holdem.core.deck``."""
    seven = exact.seven_card_categories()
    return [
        goodness(
            "hands",
            "player's two-card class (169)",
            c.player_hole,
            exact.hole_classes(),
            hole_labels(),
        ),
        goodness(
            "hands",
            "dealer's two-card class (169)",
            c.dealer_hole,
            exact.hole_classes(),
            hole_labels(),
        ),
        goodness("hands", "flop texture", c.flop_texture, exact.flop_textures(), TEXTURES),
        goodness(
            "hands",
            "player's five cards at the flop",
            c.player_flop,
            exact.five_card_categories(),
            CATEGORIES,
        ),
        goodness("hands", "player's final seven cards", c.player_seven, seven, CATEGORIES),
        goodness("hands", "dealer's final seven cards", c.dealer_seven, seven, CATEGORIES),
    ]


def orders_and_runs(c: Counts) -> list[Result]:
    """Relative order of the first 3, 4, 5 cards; ascending and alternating runs of the codes."""
    runs = [str(r) for r in range(DECK + 1)]
    return [
        goodness("order", "order of the first 3 cards", c.prefix3, exact.prefix_orders(3)),
        goodness("order", "order of the first 4 cards", c.prefix4, exact.prefix_orders(4)),
        goodness("order", "order of the first 5 cards", c.prefix5, exact.prefix_orders(5)),
        goodness("order", "runs up (ascending runs)", c.runs_up, exact.ascending_runs(), runs),
        goodness(
            "order",
            "runs up and down (alternating)",
            c.runs_alternating,
            exact.alternating_runs(),
            runs[:DECK],
        ),
    ]


def shuffle_battery(c: Counts) -> list[Result]:
    """Every test on the shuffled decks."""
    return [*card_position(c), adjacent_pairs(c), position_pairs(c), *hands(c), *orders_and_runs(c)]


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control, any dependence)."""
    order = np.argsort(pvalues)
    adjusted, running = [0.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def second_level(results: list[Result]) -> Result:
    """Kolmogorov–Smirnov: are the p-values of the individual tests uniform on [0, 1]?"""
    pvalues = [q for r in results for q in (r.parts or [r.pvalue])]
    ks = stats.kstest(pvalues, "uniform")
    return Result(
        "second level",
        f"KS uniformity of {len(pvalues)} p-values",
        float(ks.statistic),
        f"n={len(pvalues)}",
        float(ks.pvalue),
        parts=[],
    )
