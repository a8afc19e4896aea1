"""NIST SP 800-22 rev. 1a's tests, vectorised, each with its own input and applicability rules.

Every test takes a 0/1 array and returns either its p-values or ``NotApplicable`` with the
rule that the input does not meet (section numbers are SP 800-22 rev. 1a's). A test that does
not apply is reported as such, never as p = 0: that is what SP 800-22 asks (2.14.7, 2.15.7: the
random excursion tests need at least 500 cycles; 2.x.7 the input sizes and block sizes).

The formulas are the document's; the worked examples of its sections 2.x.4 are the unit tests.
``nistrng`` 1.2.3 was used before and was dropped: its excursion variant returns the erfc
argument instead of the p-value (p ~ 0 whenever a state is visited about J times), its M = 128
longest-run table is the M = 8 one, its overlapping template test counts one window short on
1,062-bit blocks, and its serial and approximate entropy tests loop in Python (60 s a megabit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special

Bits = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class NotApplicable:
    """The rule of SP 800-22 that this input does not meet."""

    why: str


Outcome = list[float] | NotApplicable


def _igamc(a: float, x: float) -> float:
    return float(special.gammaincc(a, x))


def _erfc(x: float) -> float:
    return float(special.erfc(x))


def _windows(bits: Bits, m: int) -> npt.NDArray[np.int64]:
    """The value of each overlapping m-bit window, wrapping around the end (2.11, 2.12)."""
    n = len(bits)
    ext = np.concatenate([bits, bits[: m - 1]])
    value = np.zeros(n, dtype=np.int64)
    for j in range(m):
        value = (value << 1) | ext[j : j + n]
    return value


def frequency(bits: Bits) -> Outcome:
    """2.1 Frequency (monobit): n >= 100."""
    n = len(bits)
    if n < 100:
        return NotApplicable(f"2.1.7: n >= 100 bits (n = {n:,})")
    return frequency_of(bits)


def frequency_of(bits: Bits) -> Outcome:
    s = abs(int(2 * bits.sum() - len(bits))) / math.sqrt(len(bits))
    return [_erfc(s / math.sqrt(2))]


def block_frequency(bits: Bits) -> Outcome:
    """2.2 Frequency within a block: n >= 100, M >= 20, M > 0.01 n, N < 100 (2.2.7)."""
    n = len(bits)
    if n < 100:
        return NotApplicable(f"2.2.7: n >= 100 bits (n = {n:,})")
    m = max(20, n // 99 + 1)  # the smallest M with N = n // M < 100 and M > 0.01 n
    return block_frequency_with(bits, m)


def block_frequency_with(bits: Bits, m: int) -> Outcome:
    blocks = len(bits) // m
    pi = bits[: blocks * m].reshape(blocks, m).mean(axis=1)
    chi2 = 4.0 * m * float(((pi - 0.5) ** 2).sum())
    return [_igamc(blocks / 2, chi2 / 2)]


def runs(bits: Bits) -> Outcome:
    """2.3 Runs: n >= 100; the frequency prerequisite |pi - 1/2| < 2 / sqrt(n) (2.3.4).

    When the prerequisite fails SP 800-22 does not run the test and records p = 0: the sequence
    has already failed the frequency test, so this is a failure, not an inapplicable test.
    """
    n = len(bits)
    if n < 100:
        return NotApplicable(f"2.3.7: n >= 100 bits (n = {n:,})")
    return runs_of(bits)


def runs_of(bits: Bits) -> Outcome:
    n, pi = len(bits), float(bits.mean())
    if abs(pi - 0.5) >= 2 / math.sqrt(n):
        return [0.0]
    v = 1 + int(np.count_nonzero(bits[1:] != bits[:-1]))
    num = abs(v - 2 * n * pi * (1 - pi))
    return [_erfc(num / (2 * math.sqrt(2 * n) * pi * (1 - pi)))]


# 2.4.4 / 3.4: block length M, classes' lower edge and upper edge, their probabilities
LONGEST_RUN = {
    8: (1, 4, [0.2148, 0.3672, 0.2305, 0.1875]),
    128: (4, 9, [0.1174, 0.2430, 0.2493, 0.1752, 0.1027, 0.1124]),
    10_000: (10, 16, [0.0882, 0.2092, 0.2483, 0.1933, 0.1208, 0.0675, 0.0727]),
}


def longest_run(bits: Bits) -> Outcome:
    """2.4 Longest run of ones in a block: n >= 128 (M = 8), 6,272 (128), 750,000 (10^4)."""
    n = len(bits)
    if n < 128:
        return NotApplicable(f"2.4.2: n >= 128 bits (n = {n:,})")
    m = 10_000 if n >= 750_000 else 128 if n >= 6_272 else 8
    low, high, probs = LONGEST_RUN[m]
    blocks = n // m
    grid = bits[: blocks * m].reshape(blocks, m)
    total = np.cumsum(grid, axis=1)
    since_zero = total - np.maximum.accumulate(np.where(grid == 0, total, 0), axis=1)
    longest = np.clip(since_zero.max(axis=1), low, high) - low
    observed = np.bincount(longest, minlength=len(probs)).astype(np.float64)
    expected = blocks * np.asarray(probs)
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    return [_igamc((len(probs) - 1) / 2, chi2 / 2)]


def gf2_ranks(rows: npt.NDArray[np.uint64], width: int) -> npt.NDArray[np.int64]:
    """Ranks over GF(2) of many matrices at once; ``rows[k, i]`` is row i of matrix k as bits."""
    rows = rows.copy()
    count, height = rows.shape
    rank = np.zeros(count, dtype=np.int64)
    index = np.arange(height)
    every = np.arange(count)
    for col in range(width):
        bit = np.uint64(1 << (width - 1 - col))
        candidates = ((rows & bit) != 0) & (index[None, :] >= rank[:, None])
        found = candidates.any(axis=1)
        pivot = np.argmax(candidates, axis=1)
        k = every[found]
        r, p = rank[found], pivot[found]
        top, chosen = rows[k, r].copy(), rows[k, p].copy()
        rows[k, r], rows[k, p] = chosen, top
        clear = ((rows[k] & bit) != 0) & (index[None, :] != r[:, None])
        rows[k] ^= np.where(clear, chosen[:, None], np.uint64(0))
        rank[found] += 1
    return rank


def matrix_rank(bits: Bits) -> Outcome:
    """2.5 Binary matrix rank: 32 x 32 matrices, n >= 38 M Q = 38,912 (2.5.7)."""
    n, side = len(bits), 32
    count = n // (side * side)
    if count < 38:
        return NotApplicable(f"2.5.7: n >= 38,912 bits, 38 matrices of 32 x 32 (n = {n:,})")
    grid = bits[: count * side * side].reshape(count, side, side).astype(np.uint64)
    rows = (grid << np.arange(side - 1, -1, -1, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)
    rank = gf2_ranks(rows, side)
    observed = np.array([(rank == side).sum(), (rank == side - 1).sum(), (rank < side - 1).sum()])
    expected = count * np.array([0.2888, 0.5776, 0.1336])
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    return [math.exp(-chi2 / 2)]


def spectral(bits: Bits) -> Outcome:
    """2.6 Discrete Fourier transform (spectral): n >= 1,000 (2.6.7)."""
    n = len(bits)
    if n < 1000:
        return NotApplicable(f"2.6.7: n >= 1,000 bits (n = {n:,})")
    modulus = np.abs(np.fft.fft(2.0 * bits - 1.0))[: n // 2]
    threshold = math.sqrt(math.log(1 / 0.05) * n)
    n0, n1 = 0.95 * n / 2, float(np.count_nonzero(modulus < threshold))
    d = (n1 - n0) / math.sqrt(n * 0.95 * 0.05 / 4)
    return [_erfc(abs(d) / math.sqrt(2))]


def aperiodic_templates(m: int) -> list[int]:
    """The m-bit templates that cannot overlap themselves (148 of them for m = 9, 2.7)."""
    out = []
    for t in range(1 << m):
        s = format(t, f"0{m}b")
        if all(s[k:] != s[: m - k] for k in range(1, m)):
            out.append(t)
    return out


def non_overlapping_template(bits: Bits, m: int = 9, blocks: int = 8) -> Outcome:
    """2.7 Non-overlapping template matching, every aperiodic 9-bit template, N = 8 blocks.

    An aperiodic template's matches cannot overlap, so the non-overlapping count is the count
    of matching windows. 2.7.7: N <= 100 and M > 0.01 n hold for N = 8; the mean count
    (M - m + 1) / 2^m must be large enough for the normal approximation: n >= 10^6 as in the
    document's examples and the sts defaults (M = 125,000, mean 244).
    """
    n = len(bits)
    if n < 1_000_000:
        return NotApplicable(f"2.7.7: n >= 1,000,000 bits for N = 8, m = 9 (n = {n:,})")
    size = n // blocks
    mu = (size - m + 1) / 2**m
    var = size * (1 / 2**m - (2 * m - 1) / 2 ** (2 * m))
    counts = np.empty((blocks, 1 << m))
    for j in range(blocks):
        block = bits[j * size : (j + 1) * size]
        counts[j] = np.bincount(_windows(block, m)[: size - m + 1], minlength=1 << m)
    chi2 = ((counts[:, aperiodic_templates(m)] - mu) ** 2 / var).sum(axis=0)
    return [float(p) for p in special.gammaincc(blocks / 2, chi2 / 2)]


def overlapping_template(bits: Bits) -> Outcome:
    """2.8 Overlapping template of nine ones: M = 1,032, N = 968, n >= 10^6 (2.8.7)."""
    n, m, size, blocks = len(bits), 9, 1032, 968
    if n < 1_000_000:
        return NotApplicable(f"2.8.7: n >= 1,000,000 bits (n = {n:,})")
    grid = bits[: blocks * size].reshape(blocks, size)
    windows = np.ones((blocks, size - m + 1), dtype=bool)
    for j in range(m):
        windows &= grid[:, j : j + size - m + 1] == 1
    hits = np.minimum(windows.sum(axis=1), 5)
    observed = np.bincount(hits, minlength=6).astype(np.float64)
    probs = np.array([0.364091, 0.185659, 0.139381, 0.100571, 0.070432, 0.139865])
    expected = blocks * probs
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    return [_igamc(5 / 2, chi2 / 2)]


# 2.9.7: L for n from 387,840 up; expected value and variance of the statistic per L
UNIVERSAL = [
    (387_840, 6, 5.2177052, 2.954),
    (904_960, 7, 6.1962507, 3.125),
    (2_068_480, 8, 7.1836656, 3.238),
    (4_654_080, 9, 8.1764248, 3.311),
    (10_342_400, 10, 9.1723243, 3.356),
]


def universal(bits: Bits) -> Outcome:
    """2.9 Maurer's universal statistical test: n >= 387,840 (L = 6), Q = 10 * 2^L (2.9.7)."""
    n = len(bits)
    fits = [row for row in UNIVERSAL if n >= row[0]]
    if not fits:
        return NotApplicable(f"2.9.7: n >= 387,840 bits (n = {n:,})")
    _, size, mean, variance = fits[-1]
    q = 10 * 2**size
    k = n // size - q
    weights = 1 << np.arange(size - 1, -1, -1)
    values = bits[: (q + k) * size].reshape(q + k, size) @ weights
    order = np.argsort(values, kind="stable")
    previous = np.zeros(q + k, dtype=np.int64)  # 1-based index of the last same block, 0: none
    same = values[order[1:]] == values[order[:-1]]
    previous[order[1:][same]] = order[:-1][same] + 1
    here = np.arange(1, q + k + 1)
    f = float(np.log2((here - previous)[q:]).mean())
    c = 0.7 - 0.8 / size + (4 + 32 / size) * k ** (-3 / size) / 15
    sigma = c * math.sqrt(variance / k)
    return [_erfc(abs(f - mean) / (math.sqrt(2) * sigma))]


def _psi2(bits: Bits, m: int) -> float:
    if m <= 0:
        return 0.0
    counts = np.bincount(_windows(bits, m), minlength=1 << m).astype(np.float64)
    n = len(bits)
    return float((counts**2).sum() * 2**m / n - n)


def _pattern_length(
    n: int, m: int | None, largest: int, margin: int, least: int, section: str
) -> int | NotApplicable:
    """The pattern length m: given, or the largest up to ``largest`` that the rule allows."""
    bound = int(math.log2(n)) - margin if n > 1 else 0  # the rule: m < floor(log2 n) - margin
    m = m if m is not None else min(largest, bound - 1)
    if m < least or m >= bound:
        return NotApplicable(
            f"{section}: m < floor(log2 n) - {margin} with m >= {least} (n = {n:,})"
        )
    return m


def serial(bits: Bits, m: int | None = None) -> Outcome:
    """2.11 Serial: m < floor(log2 n) - 2 (2.11.7); m = 16 from n = 2^19 on."""
    length = _pattern_length(len(bits), m, 16, 2, 3, "2.11.7")
    return length if isinstance(length, NotApplicable) else serial_with(bits, length)


def serial_with(bits: Bits, m: int) -> Outcome:
    a, b, c = _psi2(bits, m), _psi2(bits, m - 1), _psi2(bits, m - 2)
    return [_igamc(2 ** (m - 2), (a - b) / 2), _igamc(2 ** (m - 3), (a - 2 * b + c) / 2)]


def _phi(bits: Bits, m: int) -> float:
    counts = np.bincount(_windows(bits, m), minlength=1 << m).astype(np.float64)
    pi = counts[counts > 0] / len(bits)
    return float((pi * np.log(pi)).sum())


def approximate_entropy(bits: Bits, m: int | None = None) -> Outcome:
    """2.12 Approximate entropy: m < floor(log2 n) - 5 (2.12.7); m = 10 from n = 2^16 on."""
    length = _pattern_length(len(bits), m, 10, 5, 1, "2.12.7")
    return length if isinstance(length, NotApplicable) else approximate_entropy_with(bits, length)


def approximate_entropy_with(bits: Bits, m: int) -> Outcome:
    apen = _phi(bits, m) - _phi(bits, m + 1)
    chi2 = 2 * len(bits) * (math.log(2) - apen)
    return [_igamc(2 ** (m - 1), chi2 / 2)]


def cusum_p(n: int, z: int) -> float:
    root = math.sqrt(n)
    norm = special.ndtr
    ks = np.arange((-n // z + 1) // 4, (n // z - 1) // 4 + 1)
    first = float((norm((4 * ks + 1) * z / root) - norm((4 * ks - 1) * z / root)).sum())
    ks = np.arange((-n // z - 3) // 4, (n // z - 1) // 4 + 1)
    second = float((norm((4 * ks + 3) * z / root) - norm((4 * ks + 1) * z / root)).sum())
    return 1 - first + second


def cumulative_sums(bits: Bits) -> Outcome:
    """2.13 Cumulative sums, forward and backward: n >= 100 (2.13.7)."""
    n = len(bits)
    if n < 100:
        return NotApplicable(f"2.13.7: n >= 100 bits (n = {n:,})")
    steps = 2 * bits - 1
    forward = int(np.abs(np.cumsum(steps)).max())
    backward = int(np.abs(np.cumsum(steps[::-1])).max())
    return [cusum_p(n, forward), cusum_p(n, backward)]


def _walk(bits: Bits) -> tuple[npt.NDArray[np.int64], int]:
    """The walk S' with a zero at each end (2.14.4 step 3) and its number of cycles J.

    A walk that already ends at zero gets no second zero (as the sts code): no empty cycle.
    """
    sums = np.cumsum(2 * bits - 1)
    walk = np.concatenate([[0], sums, [0]] if len(sums) and sums[-1] else [[0], sums])
    return walk, int(np.count_nonzero(walk[1:] == 0))


def _cycles_rule(n: int, cycles: int) -> NotApplicable | None:
    if n < 1_000_000:
        return NotApplicable(f"n >= 1,000,000 bits (n = {n:,})")
    need = max(0.005 * math.sqrt(n), 500)
    if cycles < need:
        return NotApplicable(f"J = {cycles} cycles, fewer than max(0.005 sqrt(n), 500) = {need:g}")
    return None


def excursion_probabilities(x: int) -> Floats:
    """pi_k(x), k = 0..4 and >= 5 visits to state x in one cycle (2.14.5, 3.14)."""
    a = 1 - 1 / (2 * abs(x))
    return np.array(
        [a] + [(1 / (4 * x * x)) * a ** (k - 1) for k in range(1, 5)] + [(1 / (2 * abs(x))) * a**4]
    )


STATES = [-4, -3, -2, -1, 1, 2, 3, 4]
VARIANT_STATES = [x for x in range(-9, 10) if x]


def random_excursions(bits: Bits, enforce: bool = True) -> Outcome:
    """2.14 Random excursions: eight states, chi-square over visits per cycle; J >= 500."""
    walk, cycles = _walk(bits)
    rule = _cycles_rule(len(bits), cycles) if enforce else None
    if rule:
        return NotApplicable(f"2.14.7: {rule.why}")
    cycle = np.cumsum(walk == 0)[1:] - 1  # the cycle each step belongs to
    inner = walk[1:]
    out = []
    for x in STATES:
        visits = np.bincount(cycle[inner == x], minlength=cycles)
        observed = np.bincount(np.minimum(visits, 5), minlength=6).astype(np.float64)
        expected = cycles * excursion_probabilities(x)
        out.append(_igamc(5 / 2, float(((observed - expected) ** 2 / expected).sum()) / 2))
    return out


def random_excursions_variant(bits: Bits, enforce: bool = True) -> Outcome:
    """2.15 Random excursions variant: visits to each of 18 states against J; J >= 500."""
    walk, cycles = _walk(bits)
    rule = _cycles_rule(len(bits), cycles) if enforce else None
    if rule:
        return NotApplicable(f"2.15.7: {rule.why}")
    out = []
    for x in VARIANT_STATES:
        visits = int(np.count_nonzero(walk == x))
        out.append(_erfc(abs(visits - cycles) / math.sqrt(2 * cycles * (4 * abs(x) - 2))))
    return out


BATTERY: dict[str, Callable[[Bits], Outcome]] = {
    "frequency (monobit)": frequency,
    "frequency within a block": block_frequency,
    "runs": runs,
    "longest run of ones in a block": longest_run,
    "binary matrix rank": matrix_rank,
    "discrete Fourier transform (spectral)": spectral,
    "non-overlapping template (148 aperiodic, m = 9)": non_overlapping_template,
    "overlapping template (m = 9)": overlapping_template,
    "Maurer's universal statistical": universal,
    "serial": serial,
    "approximate entropy": approximate_entropy,
    "cumulative sums (forward, backward)": cumulative_sums,
    "random excursions": random_excursions,
    "random excursions variant": random_excursions_variant,
}
# 2.10 is not run: a Berlekamp-Massey over 1,000 blocks of 500 bits is minutes in Python
NOT_RUN = {
    "linear complexity": "not implemented here: a Berlekamp-Massey over 1,000 blocks of 500 "
    "bits in Python takes minutes; nistrng 1.2.3's returned p = 0"
}
