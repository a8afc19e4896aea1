"""NIST SP 800-22 rev. 1a: the document's worked examples, and each test's applicability rules.

The examples (sections 2.x.4) are tiny inputs that break the tests' own size rules, so they call
the formulas directly (``*_with``, ``enforce=False``). The figures are the document's, to its
six printed digits; two are given to 1e-4 only: the random excursion example used probabilities
rounded to four digits (2.14.8's table) and the cumulative sums example a rounded normal.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import pytest

from holdem.lab.rng import nist, sp800_22
from holdem.lab.rng.sp800_22 import NotApplicable


def bits(text: str) -> sp800_22.Bits:
    return np.array([int(c) for c in text], dtype=np.int64)


EXAMPLES = [  # (section, test, input, the document's p-values)
    ("2.1.4", sp800_22.frequency_of, "1011010101", [0.527089]),
    ("2.2.4", lambda b: sp800_22.block_frequency_with(b, 3), "0110011010", [0.801252]),
    ("2.3.4", sp800_22.runs_of, "1001101011", [0.147232]),
    ("2.11.4", lambda b: sp800_22.serial_with(b, 3), "0011011101", [0.808792, 0.670320]),
    ("2.12.4", lambda b: sp800_22.approximate_entropy_with(b, 3), "0100110101", [0.261961]),
]


@pytest.mark.parametrize(("section", "test", "text", "expected"), EXAMPLES)
def test_the_documents_worked_examples(
    section: str, test: Callable[[sp800_22.Bits], object], text: str, expected: list[float]
) -> None:
    assert test(bits(text)) == pytest.approx(expected, abs=1e-6), section


def test_the_worked_examples_of_the_walks() -> None:
    assert sp800_22.cusum_p(10, 4) == pytest.approx(0.4116588, abs=1e-4)  # 2.13.4, forward
    walk = bits("0110110101")
    variant = sp800_22.random_excursions_variant(walk, enforce=False)
    assert isinstance(variant, list)
    assert variant[sp800_22.VARIANT_STATES.index(1)] == pytest.approx(0.683091, abs=1e-6)
    excursion = sp800_22.random_excursions(walk, enforce=False)
    assert isinstance(excursion, list)
    assert excursion[sp800_22.STATES.index(1)] == pytest.approx(0.502529, abs=1e-4)


def test_the_size_rules_apply_to_the_examples_too() -> None:
    assert sp800_22.runs(bits("1001101011")) == NotApplicable("2.3.7: n >= 100 bits (n = 10)")
    assert isinstance(sp800_22.serial(bits("0011011101")), NotApplicable)


def test_the_excursion_variant_reports_a_state_visited_j_times_as_p_one_not_zero() -> None:
    # the old library returned |xi - J| / sqrt(...) itself, so a perfect state scored p = 0
    walk = bits("10" * 600_000)  # +1, 0, +1, 0 ...: J = 600,000 cycles, state +1 visited J times
    variant = sp800_22.random_excursions_variant(walk)
    assert isinstance(variant, list)
    assert variant[sp800_22.VARIANT_STATES.index(1)] == 1.0


def test_a_walk_with_fewer_than_500_cycles_is_not_applicable_not_p_zero() -> None:
    drift = bits("1" * 1_000 + "10" * 200 + "0" * 1_000 + "1" * 997_600)  # J well below 500
    for test in (sp800_22.random_excursions, sp800_22.random_excursions_variant):
        outcome = test(drift)
        assert isinstance(outcome, NotApplicable) and "500" in outcome.why


def test_each_tests_size_rules() -> None:
    short = np.zeros(50_000, dtype=np.int64)
    results = {name: test(short) for name, test in sp800_22.BATTERY.items()}
    not_applicable = {n for n, r in results.items() if isinstance(r, NotApplicable)}
    assert not_applicable == {
        "non-overlapping template (148 aperiodic, m = 9)",
        "overlapping template (m = 9)",
        "Maurer's universal statistical",
        "random excursions",
        "random excursions variant",
    }
    assert len(sp800_22.aperiodic_templates(9)) == 148
    assert isinstance(sp800_22.matrix_rank(short[:38_000]), NotApplicable)


def test_the_gf2_rank_of_known_matrices() -> None:
    identity = np.array([1 << (31 - i) for i in range(32)], dtype=np.uint64)
    twice = identity.copy()
    twice[5] = twice[4]
    dependent = identity.copy()
    dependent[7] = identity[1] ^ identity[2]
    dependent[9] = identity[3] ^ identity[1] ^ identity[2]
    ranks = sp800_22.gf2_ranks(np.stack([identity, twice, dependent, identity * 0]), 32)
    assert ranks.tolist() == [32, 31, 30, 0]


def test_a_biased_or_patterned_stream_fails() -> None:
    rng = np.random.default_rng(11)
    biased = (rng.random(1_000_000) < 0.505).astype(np.int64)
    outcome = sp800_22.frequency(biased)
    assert isinstance(outcome, list) and outcome[0] < 1e-3
    repeated = np.tile(nist.stream_bits(1024, os.urandom), 125)  # a 1 KiB block, 125 times
    results, _ = nist.run(repeated)
    assert min(r.pvalue for r in results) < 1e-6
