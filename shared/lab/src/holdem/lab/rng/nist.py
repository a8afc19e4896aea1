"""The raw stream behind the shuffle (``os.urandom``) through NIST SP 800-22 (``sp800_22``)."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from holdem.lab.rng import sp800_22
from holdem.lab.rng.stats import Result, min_p

Source = Callable[[int], bytes]


def stream_bits(nbytes: int, source: Source = os.urandom) -> npt.NDArray[np.int64]:
    """The bits of ``nbytes`` from ``source``: what the shuffle's ``OneRead`` reads."""
    return np.unpackbits(np.frombuffer(source(nbytes), dtype=np.uint8)).astype(np.int64)


def run(bits: npt.NDArray[np.int64]) -> tuple[list[Result], dict[str, str]]:
    """Each SP 800-22 test that applies to ``bits``; the others with the rule they do not meet.

    A test that does not apply (too few bits, too few cycles) is listed with why, never scored.
    """
    results: list[Result] = []
    skipped = dict(sp800_22.NOT_RUN)
    for name, test in sp800_22.BATTERY.items():
        outcome = test(bits)
        if isinstance(outcome, sp800_22.NotApplicable):
            skipped[name] = f"not applicable: {outcome.why}"
            continue
        label = f"{name} ({len(bits):,} bits)"
        if len(outcome) == 1:
            results.append(Result("NIST SP 800-22", label, outcome[0], "-", outcome[0]))
        else:
            results.append(min_p("NIST SP 800-22", label, np.asarray(outcome)))
    return results, skipped
