"""The report's figures (matplotlib, Agg): heat map, p-value histogram, hands observed/expected."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on a server or in CI
import matplotlib.pyplot as plt
import numpy as np

from holdem.core.cards import Card
from holdem.lab.rng.sampling import DECK, Counts
from holdem.lab.rng.stats import Result

DPI = 90  # keeps each PNG well under 300 KB


def heat_map(c: Counts, path: Path) -> None:
    """Observed / expected for each card (row) at each position (column); 1.0 is perfect."""
    ratio = c.card_position / (c.decks / DECK)
    spread = max(float(np.abs(ratio - 1).max()), 1e-3)
    fig, ax = plt.subplots(figsize=(8, 7.2))
    image = ax.imshow(ratio, cmap="RdBu_r", vmin=1 - spread, vmax=1 + spread)
    labels = [str(Card(i)) for i in range(DECK)]
    ax.set_yticks(range(0, DECK, 4), labels[::4], fontsize=7)
    ax.set_xticks(range(0, DECK, 4), [str(i) for i in range(0, DECK, 4)], fontsize=7)
    ax.set_xlabel("position in the deck (0 = player's first card)")
    ax.set_ylabel("card")
    ax.set_title(f"card x position, observed / expected ({c.decks:,} decks)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def pvalue_histogram(pvalues: list[float], path: Path) -> None:
    """The p-values of every individual test: flat if the shuffle is fair."""
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.hist(pvalues, bins=20, range=(0, 1), color="#4477aa", edgecolor="white")
    ax.axhline(len(pvalues) / 20, color="black", linestyle="--", linewidth=1, label="uniform")
    ax.set_xlabel("p-value")
    ax.set_ylabel("tests")
    ax.set_title(f"{len(pvalues)} p-values (second-level test: uniform?)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def hand_categories(results: list[Result], path: Path) -> None:
    """Observed / expected per category for the hand tests with few categories (log scale)."""
    shown = [r for r in results if r.table and len(r.table) <= 10]
    fig, axes = plt.subplots(len(shown), 1, figsize=(8, 2.3 * len(shown)), squeeze=False)
    for ax, r in zip(axes[:, 0], shown, strict=True):
        labels = [row[0] for row in r.table]
        x = np.arange(len(labels))
        ax.bar(x - 0.2, [row[1] for row in r.table], 0.4, label="observed", color="#4477aa")
        ax.bar(x + 0.2, [row[2] for row in r.table], 0.4, label="expected", color="#cccccc")
        ax.set_yscale("log")
        ax.set_xticks(x, labels, fontsize=7, rotation=20)
        ax.set_title(f"{r.name}  (p = {r.pvalue:.3g})", fontsize=9)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
