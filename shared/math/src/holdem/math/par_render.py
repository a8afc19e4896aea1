"""The PAR sheet's files: ``par.json`` (every figure, exact), ``par.md``, ``par.html`` and
``par.png`` (the net-result distributions). Written from the figures alone, no clock and no
host name, so a release gives the same bytes every time."""

from __future__ import annotations

import html
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from holdem.math.par import Figures, Line, Par, sheet_figures

GAMES = {"main": "main game (ante + call)", "aa_bonus": "AA Bonus", "combined": "combined"}


def exact(value: Fraction) -> dict[str, str]:
    return {"fraction": f"{value.numerator}/{value.denominator}", "decimal": f"{float(value):.12g}"}


def _figures(f: Figures) -> dict[str, Any]:
    out: dict[str, Any] = {} if f.rtp is None else {"rtp": exact(f.rtp)}
    return out | {
        "mean_net_per_ante": exact(f.mean),
        "variance": exact(f.variance),
        "standard_deviation": f"{f.standard_deviation:.6f}",
        "hit_frequency": exact(f.hit_frequency),
        "max_win": {
            "net": f.max_win,
            "combinations": f.max_win_combinations,
            "probability": exact(Fraction(f.max_win_combinations, f.total)),
        },
    }


def _lines(lines: tuple[Line, ...]) -> list[dict[str, Any]]:
    total = sum(line.combinations for line in lines)
    wagered = sum(line.stake * line.combinations for line in lines)
    return [
        {
            "outcome": line.outcome,
            "net": line.net,
            "combinations": line.combinations,
            "probability": exact(Fraction(line.combinations, total)),
            "rtp_share": exact(Fraction((line.stake + line.net) * line.combinations, wagered)),
        }
        for line in lines
    ]


def as_json(pars: list[Par]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in pars:
        f = sheet_figures(p)
        total = p.total
        out.setdefault(p.pay_table, {})[p.strategy] = {
            "combinations": total,
            "main": {"outcomes": _lines(p.main), **_figures(f["main"])},
            "aa_bonus": {"outcomes": _lines(p.bonus), **_figures(f["aa_bonus"])},
            "combined": {
                "distribution": [
                    {"net": net, "combinations": n, "probability": exact(Fraction(n, total))}
                    for net, n in p.combined.items()
                ],
                **_figures(f["combined"]),
            },
        }
    return {"format": 1, "pay_tables": out}


def _summary_rows(data: dict[str, Any]) -> list[list[str]]:
    rows = []
    for game, title in GAMES.items():
        g = data[game]
        top = g["max_win"]
        rows.append([
            title,
            g["rtp"]["decimal"] if "rtp" in g else "-",
            g["variance"]["decimal"],
            g["standard_deviation"],
            g["hit_frequency"]["decimal"],
            f"{top['net']} ({top['combinations']} deals, p = {top['probability']['decimal']})",
        ])  # fmt: skip
    return rows


SUMMARY = ["", "RTP", "variance", "std. dev.", "hit frequency", "max win (antes)"]
OUTCOMES = ["outcome", "net (antes)", "combinations", "probability", "RTP share"]


def _outcome_rows(lines: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for o in lines:
        probability = f"{o['probability']['fraction']} = {o['probability']['decimal']}"
        out.append([o["outcome"], str(o["net"]), str(o["combinations"]), probability,
                    o["rtp_share"]["decimal"]])  # fmt: skip
    return out


Table = tuple[str, list[str], list[list[str]]]  # caption, header, rows


def _sections(sheet: dict[str, Any]) -> list[tuple[str, list[Table]]]:
    """(heading, [(caption, header, rows)]) of every pay table and strategy."""
    out = []
    for version, strategies in sheet["pay_tables"].items():
        for name, data in strategies.items():
            tables = [
                (f"{data['combinations']} deals; net result per ante", SUMMARY,
                 _summary_rows(data)),
                ("Main game", OUTCOMES, _outcome_rows(data["main"]["outcomes"])),
                ("AA Bonus (one ante)", OUTCOMES, _outcome_rows(data["aa_bonus"]["outcomes"])),
            ]  # fmt: skip
            out.append((f"Pay table {version}, strategy {name}", tables))
    return out


INTRO = (
    "Every figure by full enumeration of hole, flop, turn, river and dealer cards; exact "
    "fractions in par.json. Net results are per ante; the combined game adds an AA Bonus of one "
    "ante to every round. Hit frequency: the probability that the net result is positive. "
    "RTP share: the outcome's returns over everything wagered on the game."
)


def markdown(sheet: dict[str, Any]) -> str:
    lines = ["# PAR sheet: Casino Hold'em", "", INTRO, "", "![net results](par.png)", ""]
    for heading, tables in _sections(sheet):
        lines += [f"## {heading}", ""]
        for caption, header, rows in tables:
            lines += [f"**{caption}**", "", "| " + " | ".join(header) + " |"]
            lines += ["|" + "---|" * len(header)]
            lines += ["| " + " | ".join(row) + " |" for row in rows] + [""]
    return "\n".join(lines)


def to_html(sheet: dict[str, Any]) -> str:
    e = html.escape
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>PAR sheet</title>',
        "<style>table{border-collapse:collapse;margin-bottom:1em}"
        "td,th{border:1px solid #999;padding:2px 6px;text-align:right}"
        "td:first-child{text-align:left}</style></head><body>",
        "<h1>PAR sheet: Casino Hold'em</h1>",
        f"<p>{e(INTRO)}</p>",
        '<img src="par.png" alt="net-result distributions">',
    ]
    for heading, tables in _sections(sheet):
        out.append(f"<h2>{e(heading)}</h2>")
        for caption, header, rows in tables:
            out.append(f"<table><caption>{e(caption)}</caption><tr>")
            out.append("".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
            out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows]
            out.append("</table>")
    return "\n".join([*out, "</body></html>", ""])


def picture(pars: list[Par], path: Path) -> None:
    """The combined net-result distribution of each strategy, log scale (the first pay table)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    first = pars[0].pay_table
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
    for p in (p for p in pars if p.pay_table == first):
        total = p.total
        nets = list(p.combined)
        ax.plot(
            nets,
            [p.combined[n] / total for n in nets],
            marker="o",
            ls=":",
            lw=0.8,
            label=p.strategy,
        )
    ax.set_yscale("log")
    ax.set_xlabel("net result of a round with a one-ante AA Bonus (antes)")
    ax.set_ylabel("probability")
    ax.set_title(f"Net-result distribution, pay table {first}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def write(out: Path, pars: list[Par]) -> None:
    sheet = as_json(pars)
    (out / "par.json").write_text(json.dumps(sheet, indent=2, sort_keys=True) + "\n")
    (out / "par.md").write_text(markdown(sheet))
    (out / "par.html").write_text(to_html(sheet))
    picture(pars, out / "par.png")
