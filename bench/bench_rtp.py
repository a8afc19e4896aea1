"""Wall time of the full optimal enumeration, with numba's cold compile measured apart."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from holdem.math.rtp import enumerate_all, report, strategy_calls

COMPILE_ONLY = """
import time
start = time.perf_counter()
from holdem.math.rtp import enumerate_all, flop_classes, hole_counts
from holdem.math.rtp_kernels import all_flop_totals
from holdem.math.batch import kernel_tables
from holdem.math.rtp import pay_arrays
pays, qualify, _ = pay_arrays()
all_flop_totals(flop_classes()[0][:0], kernel_tables(7), pays, qualify)
hole_counts([0, 1], [2, 3, 4])
print(time.perf_counter() - start)
"""


def cold_compile_seconds() -> float:
    """Compile the kernels in a fresh process with an empty numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        done = subprocess.run(
            [sys.executable, "-c", COMPILE_ONLY],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return float(done.stdout.split()[-1])


if __name__ == "__main__":
    print(f"  numba cold compile (empty cache, fresh process)   {cold_compile_seconds():6.1f} s")
    cpu = time.process_time()
    enum = enumerate_all(progress=False)
    cpu = time.process_time() - cpu
    print(f"  kernel load from numba's cache                    {enum.compile_seconds:6.1f} s")
    print(f"  optimal enumeration, wall (2 threads)             {enum.seconds:6.1f} s")
    print(f"  optimal enumeration, CPU of all threads           {cpu:6.1f} s")
    optimal = report(enum, strategy_calls(enum, "optimal"), "optimal")
    print(f"  optimal main-game RTP {optimal.main_rtp} = {float(optimal.main_rtp):.4%}")
    print("  baseline: a compiled C enumeration of the same algorithm, 32 s (issue #3)")
