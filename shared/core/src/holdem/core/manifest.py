"""The manifest of the certified parts: SHA-256 of every file that decides an outcome.

A test lab certifies these files and nothing else decides a round's cards or its payout: the
shuffle and its randomness source and the deck commitment (``deck``), the cards and the
evaluator with its generated data (``cards``, ``evaluator*``), the rules and pay tables
(``rules``), the strategies and the optimal strategy's shipped table (``strategy``, ``data/``).
``holdem certify`` writes the manifest; ``holdem certify verify MANIFEST`` hashes the files of
the installed ``holdem.core`` (a release's wheel, or inside a service image) and compares.
Every service exports the manifest's hash as a label of ``holdem_build_info``.

Hashes are of the files' bytes; the manifest's own hash is SHA-256 of its canonical JSON (sorted
keys, no spaces), so the same files give the same hash on every machine.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).parent
# path under holdem/core -> what it decides (the manifest's order is this dict's)
CERTIFIED: Final[dict[str, str]] = {
    "deck.py": "the shuffle (Fisher-Yates over one read of the OS CSPRNG, rejection sampling as "
    "secrets.randbelow does), the deal order and the SHA-256 deck commitment",
    "cards.py": "the 52 cards and their codes",
    "evaluator.py": "the hand evaluator: a hand's value and category",
    "evaluator_tables.py": "the evaluator's lookup tables, decoded from evaluator_data.py",
    "evaluator_data.py": "the evaluator's generated data",
    "rules.py": "the rules and pay tables: dealer qualification, settlement, the AA Bonus",
    "flops.py": "the flops' suit classes that the optimal strategy's table is indexed by",
    "strategy.py": "the strategies (optimal, optimal-bonus, always-call, basic, basic-bonus)",
    "data/optimal-v1-standard-1.bin": "the optimal strategy's decision table (shipped data)",
}
FORMAT: Final = 1


@dataclass(frozen=True)
class Mismatch:
    """A certified file whose bytes differ from the manifest, or that is missing."""

    path: str
    expected: str
    found: str  # "missing" when the file is not there


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def release_version() -> str:
    """The installed holdem-core's version: the release the manifest belongs to."""
    try:
        return metadata.version("holdem-core")
    except metadata.PackageNotFoundError:
        return "unknown"


def build(root: Path = ROOT) -> dict[str, object]:
    """The manifest of the files under ``root`` (default: this installed ``holdem.core``)."""
    return {
        "format": FORMAT,
        "package": "holdem-core",
        "version": release_version(),
        "parts": [
            {"path": name, "sha256": file_hash(root / name), "decides": text}
            for name, text in CERTIFIED.items()
        ],
    }


def digest(manifest: dict[str, object]) -> str:
    """SHA-256 of the parts' paths and hashes, canonical JSON: the certified build's identity.

    Only paths and hashes count: a reworded description or another version string over the
    same bytes is the same certified build.
    """
    parts = manifest["parts"]
    assert isinstance(parts, list)
    canonical = json.dumps(
        [[p["path"], p["sha256"]] for p in parts], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


@cache
def installed_digest() -> str:
    """The digest of the running code's certified files (what ``holdem_build_info`` shows)."""
    return digest(build())


def verify(manifest: dict[str, object], root: Path = ROOT) -> list[Mismatch]:
    """Every certified file under ``root`` whose hash is not the manifest's (empty: it holds).

    A file listed in ``CERTIFIED`` that the manifest leaves out is a mismatch too: a manifest
    cannot certify less than the code says decides an outcome.
    """
    parts = manifest.get("parts")
    if not isinstance(parts, list):
        raise ValueError("not a manifest: no list of parts")
    expected = {str(p["path"]): str(p["sha256"]) for p in parts}
    out = []
    for name in sorted(set(expected) | set(CERTIFIED)):
        want = expected.get(name, "not in the manifest")
        path = root / name
        found = file_hash(path) if path.is_file() else "missing"
        if found != want:
            out.append(Mismatch(name, want, found))
    return out


def verify_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="holdem certify verify", description="check the installed "
                                "holdem-core's certified files against a manifest")  # fmt: skip
    p.add_argument("manifest", type=Path)
    args = p.parse_args(argv)
    try:
        data = json.loads(args.manifest.read_text())
        mismatches = verify(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        print(f"holdem certify verify: cannot read {args.manifest}: {error}")
        return 2
    for m in mismatches:
        print(f"MISMATCH {m.path}: manifest {m.expected}, installed {m.found}")
    if mismatches:
        print(f"FAIL: {len(mismatches)} certified file(s) differ from {args.manifest}")
        return 1
    print(f"OK: every certified file matches (digest {installed_digest()})")
    return 0


def certify_main(argv: list[str] | None = None) -> int:
    """``holdem certify verify MANIFEST`` here, with holdem-core alone (a service image has
    it); ``holdem certify OUT`` writes the pack with holdem-math (``holdem.math.certify``)."""
    args = list(argv or [])
    if args[:1] == ["verify"]:
        return verify_main(args[1:])
    try:  # by name, at run time: the core never imports holdem.math
        pack = importlib.import_module("holdem.math.certify")
    except ModuleNotFoundError:
        print("holdem certify OUT: needs holdem-math (the enumeration); verify needs only the core")
        return 2
    result: int = pack.certify_main(args)
    return result
