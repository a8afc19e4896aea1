"""The demo's picture: observed main-game RTP against rounds played, its 95% band, the exact RTP."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on a server or in CI

import matplotlib.pyplot as plt

MAX_POINTS = 2_000  # a long run is thinned to this many points: the file stays small


def thin(points: Sequence[tuple[int, float, float]]) -> list[tuple[int, float, float]]:
    """At most MAX_POINTS evenly spaced points, the last one always kept.

    >>> len(thin([(n, 1.0, 0.1) for n in range(10_000)])), thin([(1, 1.0, 0.1)])
    (2001, [(1, 1.0, 0.1)])
    """
    step = max(1, len(points) // MAX_POINTS)
    kept = list(points[::step])
    if points and kept[-1] != points[-1]:
        kept.append(points[-1])
    return kept


def plot_rtp(
    trajectory: Sequence[tuple[int, float, float]],
    exact: float | None,
    path: Path,
    strategy: str,
) -> Path:
    """Write the PNG to ``path``: the observed RTP after each settled round, its 95% band, and
    the exact figure of ``strategy`` as a line (when known)."""
    points = thin(trajectory)
    if not points:
        raise ValueError("no settled rounds to plot")
    rounds = [n for n, _, _ in points]
    rtp = [100 * r for _, r, _ in points]
    low = [100 * (r - h) for _, r, h in points]
    high = [100 * (r + h) for _, r, h in points]
    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=100)
    try:
        axes.fill_between(rounds, low, high, alpha=0.25, label="95% confidence band")
        axes.plot(rounds, rtp, linewidth=1.2, label="observed RTP")
        if exact is not None:
            axes.axhline(
                100 * exact,
                color="black",
                linestyle="--",
                linewidth=1,
                label=f"exact {100 * exact:.4f}%",
            )
        axes.set_xscale("log" if rounds[-1] >= 1_000 else "linear")
        axes.set_ylim(*_window(rtp[-1], exact))
        axes.set_xlabel("settled rounds")
        axes.set_ylabel("main-game RTP, % of ante + call")
        axes.set_title(f"Casino Hold'em through Kafka: observed RTP converging ({strategy})")
        axes.grid(True, alpha=0.3)
        axes.legend(loc="lower right")
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path)
    finally:
        plt.close(figure)
    return path


def _window(last: float, exact: float | None) -> tuple[float, float]:
    """A y range that keeps the exact figure and the end of the run in view, not the wild
    first rounds (a few rounds can be anywhere from 0% to 300%)."""
    centre = 100 * exact if exact is not None else last
    half = max(15.0, 1.5 * abs(last - centre))
    return centre - half, centre + half
