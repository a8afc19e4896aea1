"""Run the whole battery on tallies and write the report: Markdown, HTML and PNG figures."""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holdem.lab.rng import nist, plots
from holdem.lab.rng.sampling import Counts
from holdem.lab.rng.stats import Result, holm, second_level, shuffle_battery

DEFAULT_ALPHA = 0.01
HEATMAP, PVALUES, HANDS = "heatmap.png", "pvalues.png", "hands.png"
# position-pair z scores share positions, so their 1,326 p-values are far from independent;
# the random excursion states share the walk's cycle count J, cumulative sums' forward and
# backward and serial's two statistics share their counts: these enter the second-level test
# only through their Bonferroni row (names are matched by their start)
NOT_IN_SECOND_LEVEL = (
    "position-pair correlations (code products)",
    "random excursions",
    "cumulative sums",
    "serial",
)


def in_second_level(result: Result) -> bool:
    return not result.name.startswith(NOT_IN_SECOND_LEVEL)


@dataclass
class Report:
    """Every result, Holm-adjusted at ``alpha``, with what a lab needs to reproduce the run."""

    meta: dict[str, object]
    alpha: float
    results: list[Result]
    adjusted: list[float]
    nist_skipped: dict[str, str]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> list[Result]:
        return [r for r, q in zip(self.results, self.adjusted, strict=True) if q < self.alpha]

    @property
    def passed(self) -> bool:
        return not self.failed

    def all_pvalues(self) -> list[float]:
        return [q for r in self.results[:-1] for q in (r.parts or [r.pvalue]) if in_second_level(r)]


def build(
    counts: Counts,
    meta: dict[str, object],
    nist_bits: int = 1_000_000,
    alpha: float = DEFAULT_ALPHA,
) -> Report:
    """The shuffle battery on ``counts``, SP 800-22 on ``nist_bits`` fresh bits, then the KS."""
    start = time.perf_counter()
    results = shuffle_battery(counts)
    middle = time.perf_counter()
    skipped: dict[str, str] = {}
    if nist_bits:
        nist_results, skipped = nist.run(nist.stream_bits(nist_bits // 8))
        results += nist_results
    end = time.perf_counter()
    kept = [r for r in results if in_second_level(r)]
    results.append(second_level(kept))
    seconds = {"shuffle tests": round(middle - start, 1), "NIST SP 800-22": round(end - middle, 1)}
    return Report(meta, alpha, results, holm([r.pvalue for r in results]), skipped, seconds)


Block = tuple[Any, ...]  # ("h1"|"h2"|"h3"|"p", text), ("table", head, rows), ("img", file, alt)


def headline(report: Report) -> list[Block]:
    """Verdict, smallest p-value, and a warning when the tallies are from an unfinished run."""
    rows = report.results
    smallest, adjusted = min(zip(rows, report.adjusted, strict=True), key=lambda t: t[0].pvalue)
    failed = "; ".join(r.name for r in report.failed)
    verdict = "PASS: no test rejects a fair shuffle" if report.passed else f"FAIL: {failed}"
    out: list[Block] = [
        ("h1", "RNG report: the dealer's shuffle"),
        (
            "p",
            f"**Verdict: {verdict}** at a family-wise significance of {report.alpha} "
            f"(Holm's correction over the {len(rows)} rows of the summary).",
        ),
        (
            "p",
            f"Smallest p-value: {smallest.pvalue:.3g} ({smallest.group}: {smallest.name}), "
            f"Holm-adjusted {adjusted:.3g}.",
        ),
    ]
    if report.meta.get("complete") is False:
        out.append(("p", "**Warning: these tallies are a checkpoint of an unfinished run.**"))
    return out


def summary(report: Report) -> list[Block]:
    """The run's provenance and the summary table."""
    run = {**report.meta, **{f"seconds, {k}": v for k, v in report.seconds.items()}}
    rows = [
        [r.group, r.name, f"{r.statistic:.4g}", r.df, f"{r.pvalue:.4g}", f"{q:.4g}",
         "pass" if q >= report.alpha else "**FAIL**"]
        for r, q in zip(report.results, report.adjusted, strict=True)
    ]  # fmt: skip
    head = ["group", "test", "statistic", "df", "p-value", "Holm-adjusted", "verdict"]
    return [
        ("h2", "Run"),
        ("table", ["item", "value"], [[str(k), str(v)] for k, v in run.items()]),
        ("h2", "Summary"),
        ("table", head, rows),
        (
            "p",
            "Rows marked *min of k* give the smallest of k p-values as the statistic and that "
            "p-value times k (Bonferroni) as the p-value. For NIST rows the statistic column "
            "repeats the p-value. NIST SP 800-22 tests that do not apply to this input (its "
            "own rules: bits per test, block sizes, at least 500 cycles for the random "
            "excursion tests) are not scored: they are listed under *not applicable*.",
        ),
    ]


def details(report: Report) -> list[Block]:
    """The figures, the observed and expected counts, and what was not run."""
    out: list[Block] = [
        ("h2", "Figures"),
        ("img", HEATMAP, "card x position, observed / expected"),
        ("img", PVALUES, "histogram of the individual p-values"),
        ("img", HANDS, "hand categories, observed and expected"),
        ("h2", "Observed and expected counts"),
    ]
    for r in report.results:
        if r.table:
            rows = [[a, f"{o:,}", f"{e:,.1f}"] for a, o, e in r.table]
            out += [("h3", r.name), ("table", ["class", "observed", "expected"], rows)]
    skipped = [[k, v] for k, v in report.nist_skipped.items()]
    return [
        *out,
        ("h2", "NIST SP 800-22 tests not applicable or not run"),
        ("table", ["test", "why"], skipped),
        (
            "p",
            "Debian's dieharder was not run: this report uses NIST SP 800-22 rev. 1a "
            "(holdem.lab.rng.sp800_22, checked against the document's worked examples).",
        ),
    ]


def blocks(report: Report) -> list[Block]:
    """The report as headings, paragraphs, tables and images, rendered to Markdown and HTML."""
    return [*headline(report), *summary(report), *details(report)]


def markdown(items: list[Block]) -> str:
    lines: list[str] = []
    for kind, *body in items:
        if kind in {"h1", "h2", "h3"}:
            lines += ["#" * int(kind[1]) + f" {body[0]}", ""]
        elif kind == "p":
            lines += [body[0], ""]
        elif kind == "img":
            lines += [f"![{body[1]}]({body[0]})", ""]
        else:
            head, rows = body
            lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(row) + " |" for row in rows] + [""]
    return "\n".join(lines)


def _inline(text: str) -> str:
    """Escape, then the one Markdown mark the report uses inline: **bold**."""
    parts = html.escape(text).split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))


def to_html(items: list[Block]) -> str:
    body: list[str] = []
    for kind, *rest in items:
        if kind in {"h1", "h2", "h3", "p"}:
            body.append(f"<{kind}>{_inline(rest[0])}</{kind}>")
        elif kind == "img":
            body.append(f'<p><img src="{rest[0]}" alt="{html.escape(rest[1])}"></p>')
        else:
            head, rows = rest
            cells = ["<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
            cells += [
                "<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in rows
            ]
            body.append("<table>" + "\n".join(cells) + "</table>")
    style = (
        "body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:"
        "collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
    )
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>RNG report</title>'
        f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def write(report: Report, counts: Counts, out: Path) -> None:
    """``report.md``, ``report.html`` and the three figures into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    plots.heat_map(counts, out / HEATMAP)
    plots.pvalue_histogram(report.all_pvalues(), out / PVALUES)
    plots.hand_categories(report.results, out / HANDS)
    items = blocks(report)
    (out / "report.md").write_text(markdown(items))
    (out / "report.html").write_text(to_html(items))
