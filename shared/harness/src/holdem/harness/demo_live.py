"""The demo while it plays: a rich live panel on a terminal, plain progress lines elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table

from holdem.harness.load import Tally, percentile

LIVE_REFRESH_S = 0.25
PLAIN_EVERY_S = 5.0  # CI logs get a line this often, not a redrawn screen


@dataclass(frozen=True)
class Snapshot:
    """What the load has done so far, as the live view shows it."""

    rounds: int
    asked: int
    per_s: float
    open: int
    voided: int
    stalled: int
    p50: float
    p95: float
    p99: float
    rtp: tuple[float, float] | None  # observed main-game RTP and its 95% half-width
    exact: float | None

    @classmethod
    def of(cls, tally: Tally, asked: int, exact: float | None) -> Snapshot:
        elapsed = max(time.monotonic() - tally.started, 1e-9)
        lat = sorted(tally.latencies)  # once: each percentile() of a sorted list is then O(n)
        return cls(
            rounds=tally.rounds,
            asked=asked,
            per_s=tally.rounds / elapsed,
            open=tally.open,
            voided=tally.outcomes["voided"],
            stalled=len(tally.stalled),
            p50=percentile(lat, 0.5),
            p95=percentile(lat, 0.95),
            p99=percentile(lat, 0.99),
            rtp=tally.returns.main_rtp() if tally.returns.rounds >= 2 else None,
            exact=exact,
        )

    def rtp_text(self) -> str:
        """Observed RTP ± half-width beside the exact figure.

        >>> Snapshot(0, 0, 0, 0, 0, 0, 0, 0, 0, (0.97, 0.05), 0.988866).rtp_text()
        '97.00% ± 5.00% (exact 98.89%)'
        """
        exact = "n/a" if self.exact is None else f"{100 * self.exact:.2f}%"
        if self.rtp is None:
            return f"n/a (exact {exact})"
        return f"{100 * self.rtp[0]:.2f}% ± {100 * self.rtp[1]:.2f}% (exact {exact})"

    def line(self) -> str:
        """The plain progress line for logs.

        >>> print(Snapshot(120, 200, 23.4, 16, 1, 0, .41, .9, 1.2, None, None).line()[:61])
        progress: 120/200 rounds, 23.4 rounds/s, 16 open, 1 voided, 0
        """
        return (
            f"progress: {self.rounds}/{self.asked} rounds, {self.per_s:.1f} rounds/s, "
            f"{self.open} open, {self.voided} voided, {self.stalled} stalled, latency p50 "
            f"{self.p50:.3f}s p95 {self.p95:.3f}s p99 {self.p99:.3f}s, main RTP {self.rtp_text()}"
        )

    def table(self) -> Table:
        grid = Table(title="Casino Hold'em demo: live", show_header=False, min_width=60)
        grid.add_column(style="bold")
        grid.add_column()
        rows = [
            ("rounds played", f"{self.rounds} of {self.asked}"),
            ("rounds/s", f"{self.per_s:.1f}"),
            ("open rounds", str(self.open)),
            ("voided / stalled", f"{self.voided} / {self.stalled}"),
            ("latency p50 / p95 / p99", f"{self.p50:.3f}s / {self.p95:.3f}s / {self.p99:.3f}s"),
            ("main-game RTP (95% CI)", self.rtp_text()),
        ]
        for name, value in rows:
            grid.add_row(name, value)
        return grid


@contextlib.asynccontextmanager
async def live_view(
    tally: Tally, asked: int, exact: float | None, out: TextIO | None = None
) -> AsyncIterator[None]:
    """Show the load's progress while the body runs: a redrawn panel when ``out`` is a
    terminal, a plain line every PLAIN_EVERY_S seconds otherwise; the last state at the end."""
    stream = out or sys.stdout

    def snapshot() -> Snapshot:
        return Snapshot.of(tally, asked, exact)

    if not stream.isatty():
        async with _ticking(
            lambda: print(snapshot().line(), file=stream, flush=True), PLAIN_EVERY_S
        ):
            yield None
        return
    console = Console(file=stream, highlight=False)
    with Live(snapshot().table(), console=console, auto_refresh=False) as live:
        async with _ticking(lambda: live.update(snapshot().table(), refresh=True), LIVE_REFRESH_S):
            yield None


@contextlib.asynccontextmanager
async def _ticking(show: Callable[[], None], every_s: float) -> AsyncIterator[None]:
    """Call ``show`` every ``every_s`` seconds while the body runs, and once more at its end."""

    async def tick() -> None:
        while True:
            await asyncio.sleep(every_s)
            show()

    task = asyncio.create_task(tick())
    try:
        yield None
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        show()
