"""Hand evaluator speed: numba batch and Python single-hand calls, beside phevaluator and eval7.

Rates use process CPU time (robust on a busy box; the batch kernel runs on one thread) and
print the wall-clock rate too. Figures are printed, never asserted.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import eval7
import numpy as np
import numpy.typing as npt
from phevaluator import evaluate_cards

from holdem.core.cards import Card
from holdem.core.evaluator import evaluate
from holdem.math.batch import evaluate_batch, kernel_tables
from holdem.math.kernels import eval_batch7


def measure(run: Callable[[], object], count: int, repeat: int = 3) -> tuple[float, float]:
    """Best (CPU, wall) rate in evaluations per second over ``repeat`` runs."""
    best_cpu = best_wall = 0.0
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        run()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        best_cpu, best_wall = max(best_cpu, count / cpu), max(best_wall, count / wall)
    return best_cpu, best_wall


def line(name: str, rates: tuple[float, float], baseline: tuple[float, float] | None) -> str:
    text = f"  {name:38} {rates[0] / 1e6:8.2f} M/s CPU  {rates[1] / 1e6:8.2f} M/s wall"
    return text + ("" if baseline is None else f"  x{rates[0] / baseline[0]:.1f} vs phevaluator")


def random_hands(count: int, seed: int = 1) -> npt.NDArray[np.uint8]:
    rng = np.random.default_rng(seed)
    return rng.random((count, 52)).argsort(axis=1)[:, :7].astype(np.uint8)


if __name__ == "__main__":
    batch_size = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 5_000_000
    hands = random_hands(batch_size)
    tables, out = kernel_tables(7), np.empty(batch_size, dtype=np.int32)
    evaluate_batch(hands[:10])  # compile or load the kernel first
    print(f"7-card hands, {batch_size:,} random hands per batch run")
    kernel = measure(lambda: eval_batch7(hands, tables, out), batch_size)
    batch = measure(lambda: evaluate_batch(hands), batch_size)
    rows = [tuple(h) for h in hands[:200_000].tolist()]
    eval7_rows = [[eval7.Card(str(Card(c))) for c in h] for h in rows]
    phe = measure(lambda: [evaluate_cards(*h) for h in rows], len(rows))
    print(line("batch kernel (numba, one thread)", kernel, phe))
    print(line("evaluate_batch (checks + kernel)", batch, phe))
    print(line("phevaluator evaluate_cards loop", phe, phe))
    print("single-hand calls from Python")
    print(
        line("holdem evaluate(tuple)", measure(lambda: [evaluate(h) for h in rows], len(rows)), phe)
    )
    eval7_rate = measure(lambda: [eval7.evaluate(h) for h in eval7_rows], len(rows))
    print(line("eval7.evaluate(list of eval7.Card)", eval7_rate, phe))
    print(line("phevaluator evaluate_cards(*cards)", phe, phe))
