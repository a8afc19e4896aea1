"""Positive and negative controls: the battery passes the dealer's shuffle and has the power to
fail a modulo-biased one, at the same small N and the same significance.

Flakiness: the verdict is Holm-corrected at ALPHA = 0.001 over every row, so a fair shuffle
fails this test with probability at most 0.1% per run. The biased shuffle fails by a huge margin
(card x position p ~ 1e-80 at this N), so the negative control is not a coin toss either.
"""

from __future__ import annotations

import numpy as np
import pytest

from holdem.lab.rng import nist, report
from holdem.lab.rng.sampling import draw

ALPHA = 1e-3
DECKS = 20_000
NIST_BITS = 20_000


def test_the_dealers_shuffle_passes_the_battery() -> None:
    result = report.build(draw(DECKS, "secrets"), {}, nist_bits=NIST_BITS, alpha=ALPHA)
    assert result.passed, [(r.name, r.pvalue) for r in result.failed]
    names = {r.group for r in result.results}
    assert names == {"positions", "independence", "hands", "order", "NIST SP 800-22",
                     "second level"}  # fmt: skip


def test_a_modulo_biased_randbelow_fails_the_position_tests() -> None:
    result = report.build(draw(DECKS, "modulo-byte"), {}, nist_bits=0, alpha=ALPHA)
    failed = {r.name for r in result.failed}
    assert {"card x position (52 x 52)", "each card's position distribution"} <= failed


def test_a_biased_bit_stream_fails_nist_monobit() -> None:
    biased = (np.random.default_rng(7).random(NIST_BITS) < 0.53).astype(np.int64)
    results, _ = nist.run(biased)
    monobit = next(r for r in results if r.name.startswith("frequency (monobit)"))
    assert monobit.pvalue < ALPHA


def test_the_report_is_written_with_its_figures(tmp_path) -> None:  # type: ignore[no-untyped-def]
    counts = draw(500, "secrets")
    result = report.build(counts, {"shuffles": 500}, nist_bits=0)
    report.write(result, counts, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "| card x position (52 x 52) |" in text and "Holm" in text
    assert "<table>" in (tmp_path / "report.html").read_text()
    for png in ("heatmap.png", "pvalues.png", "hands.png"):
        assert (tmp_path / png).stat().st_size > 1000


@pytest.mark.parametrize(
    "argv",
    [["--shuffles", "0"], ["--source", "mersenne"], ["--alpha", "2"], ["--counts", "/nonexistent"]],
)
def test_the_command_rejects_bad_options(argv: list[str]) -> None:
    from holdem.lab.rng.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
