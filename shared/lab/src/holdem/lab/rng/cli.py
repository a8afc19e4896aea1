"""``holdem rng-report``: draw decks through the dealer's shuffle on every core, test, report."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import ssl
import subprocess
import sys
import time
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from holdem.lab.rng import report
from holdem.lab.rng.sampling import SOURCES, Counts, draw

DEFAULT_SHUFFLES = 10_000_000


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="holdem rng-report", description=__doc__)
    p.add_argument("--shuffles", type=positive, default=DEFAULT_SHUFFLES, help="decks to draw")
    p.add_argument("--out", type=Path, default=Path("rng-report"), help="report directory")
    p.add_argument("--workers", type=positive, default=os.cpu_count() or 1, help="processes")
    p.add_argument(
        "--source",
        choices=sorted(SOURCES),
        default="secrets",
        help="randbelow behind the shuffle; modulo-byte is the biased negative control",
    )
    p.add_argument("--counts", type=Path, help="render from tallies saved by an earlier run")
    p.add_argument(
        "--nist-bits",
        type=int,
        default=1_000_000,
        help="bits of os.urandom for NIST SP 800-22 (0: skip the NIST part)",
    )
    p.add_argument(
        "--alpha", type=float, default=report.DEFAULT_ALPHA, help="family-wise significance (Holm)"
    )
    return p


def environment() -> dict[str, str]:
    """What a lab needs to reproduce the run: commit, interpreter, OpenSSL, machine."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        commit += " (with uncommitted changes)" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown (not a git checkout)"
    return {
        "commit": commit,
        "python": sys.version.split()[0] + f" ({platform.python_implementation()})",
        "openssl": ssl.OPENSSL_VERSION,
        "machine": f"{platform.node()}: {platform.platform()}, {platform.machine()}, "
        f"{os.cpu_count()} cores",
        "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


CHECKPOINT_SECONDS = 120.0


def save(counts: Counts, meta: dict[str, object], out: Path) -> None:
    """The tallies and how they were drawn, so the report can be rendered again (``--counts``)."""
    counts.save(out / "counts.npz")
    (out / "counts.json").write_text(json.dumps(meta, indent=2) + "\n")


def sample(args: argparse.Namespace, meta: dict[str, object]) -> tuple[Counts, float]:
    """Draw ``args.shuffles`` decks with a progress bar; the tallies and the seconds taken.

    Every two minutes the running tallies are saved, marked incomplete, so a long run that is
    stopped still leaves evidence that can be reported (honestly labelled with its size).
    """
    columns = (
        *Progress.get_default_columns()[:1],
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    start = last = time.perf_counter()

    def on_chunk(total: Counts) -> None:
        nonlocal last
        bar.update(task, completed=total.decks)
        if time.perf_counter() - last > CHECKPOINT_SECONDS:
            last = time.perf_counter()
            partial = {**meta, "complete": False, "shuffles": total.decks}
            save(total, {**partial, "sampling_seconds": round(last - start, 1)}, args.out)

    with Progress(*columns) as bar:
        task = bar.add_task("shuffling", total=args.shuffles)
        counts = draw(args.shuffles, args.source, args.workers, on_chunk=on_chunk)
    return counts, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    if args.counts is not None and not args.counts.with_suffix(".json").is_file():
        cli.error(f"--counts: need {args.counts} and its {args.counts.with_suffix('.json').name}")
    if args.nist_bits < 0 or not 0 < args.alpha < 1:
        cli.error("--nist-bits must be >= 0 and --alpha in (0, 1)")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.counts is not None:
        counts = Counts.load(args.counts)
        meta = json.loads(args.counts.with_suffix(".json").read_text())
        meta["report rendered at commit"] = environment()["commit"]
    else:
        meta = {
            **environment(),
            "source": args.source,
            "workers": args.workers,
            "requested": args.shuffles,
        }
        counts, seconds = sample(args, meta)
        meta.update(complete=True, shuffles=counts.decks, sampling_seconds=round(seconds, 1))
        save(counts, meta, args.out)
    print(f"testing {counts.decks:,} decks and {args.nist_bits:,} bits of os.urandom ...")
    result = report.build(counts, meta, args.nist_bits, args.alpha)
    report.write(result, counts, args.out)
    verdict = "PASS" if result.passed else "FAIL: " + "; ".join(r.name for r in result.failed)
    print(f"{verdict}\nreport: {args.out / 'report.md'} and report.html")
    return 0 if result.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
