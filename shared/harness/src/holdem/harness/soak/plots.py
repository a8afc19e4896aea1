"""The soak report's PNG plots: memory, lag and latency over the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holdem.harness.soak.config import Samples
from holdem.harness.soak.statistics import per_minute_p99


def plot(samples: Samples, out: Path, warmup_s: float = 0.0) -> list[str]:
    """PNGs of memory, latency (p99 per minute) and lag against minutes, the warm-up's end
    marked; their file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    series: list[tuple[str, str, dict[str, Any]]] = [
        ("memory.png", "resident memory (MB)", samples.rss_mb),
        ("lag.png", "consumer lag (records)", samples.lag),
        ("latency.png", "p99 per minute (ms)", per_minute_p99(samples.steps)),
    ]
    for name, label, data in series:
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for key, points in sorted(data.items()):
            ax.plot([t / 60 for t, _ in points], [v for _, v in points], label=key)
        if warmup_s > 0:
            ax.axvline(warmup_s / 60, color="grey", linestyle="--", linewidth=1)
            ax.text(warmup_s / 60, ax.get_ylim()[1], " warm-up ends", va="top", fontsize="small")
        ax.set_xlabel("minutes since the load began")
        ax.set_ylabel(label)
        ax.legend(loc="upper left", fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / name, dpi=80)
        plt.close(fig)
        made.append(name)
    return made
