"""The raw stream behind the shuffle (``os.urandom``) through NIST SP 800-22 (``nistrng``)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from nistrng import SP800_22R1A_BATTERY

from holdem.lab.rng.stats import Result, min_p

# Left out, with the reason printed in the report: nistrng 1.2.3's implementations give p-values
# far from uniform on os.urandom (random_excursion: ~1e-200; non-overlapping templates: ~1.0;
# linear_complexity: 0.0 and minutes per megabit; Maurer: 0.999 every time), so they would
# measure the package, not the RNG.
EXCLUDED = {
    "random_excursion": "nistrng 1.2.3 returns p ~ 1e-200 on any input (implementation bug)",
    "non_overlapping_template_matching": "nistrng 1.2.3 returns p ~ 1.0 on any input",
    "linear_complexity": "nistrng 1.2.3 returns p = 0.0 and takes minutes per megabit",
    "maurers_universal": "nistrng 1.2.3 returned p = 0.999 on every os.urandom megabit tried",
}
# SP 800-22 section 2.15.7 asks for at least 10**6 bits (500 cycles) for the excursion variant
MIN_BITS = {"random_excursion_variant": 1_000_000}
Source = Callable[[int], bytes]


def stream_bits(nbytes: int, source: Source = os.urandom) -> npt.NDArray[np.int64]:
    """The bits of ``nbytes`` from ``source``: what the shuffle's ``OneRead`` reads."""
    return np.unpackbits(np.frombuffer(source(nbytes), dtype=np.uint8)).astype(np.int64)


def run(bits: npt.NDArray[np.int64]) -> tuple[list[Result], dict[str, str]]:
    """Each eligible SP 800-22 test on ``bits``; the not-run tests with why."""
    results, skipped = [], dict(EXCLUDED)
    for name, test in SP800_22R1A_BATTERY.items():
        if name in EXCLUDED:
            continue
        # a fresh int64 copy each time: nistrng rewrites its input and overflows on int8 sums
        if len(bits) < MIN_BITS.get(name, 0) or not test.is_eligible(bits.copy()):
            skipped[name] = f"not eligible for {len(bits):,} bits"
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            outcome, _ = test.run(bits.copy())
        # the public .score is the mean of a test's p-values; the list keeps each one
        scores = np.atleast_1d(np.asarray(outcome._score_list, dtype=np.float64))
        label = f"{name.replace('_', ' ')} ({len(bits):,} bits)"
        if len(scores) == 1:
            results.append(Result("NIST SP 800-22", label, float(scores[0]), "-", float(scores[0])))
        else:
            results.append(min_p("NIST SP 800-22", label, scores))
    return results, skipped
