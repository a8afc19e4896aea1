"""The next release, built for the rolling upgrade test (ADR 032): this tree with
``tests/fixtures/next_release.patch`` applied, in a virtualenv of its own. The patch makes it
write what this release reads but does not write yet: RoundClosed v2 and the wallet's v7
snapshots. It fails loudly when the patch no longer applies (the tree moved under it: write the
next release's patch again) or uv is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATCH = ROOT / "tests" / "fixtures" / "next_release.patch"
COPIED = ("pyproject.toml", "uv.lock", "shared", "services")
SKIPPED = shutil.ignore_patterns(".venv", "__pycache__", "*.egg-info", ".mypy_cache", ".cache")
# What the built release must say it writes: (RoundClosed, the wallet's snapshots)
WRITES = "2 7"
PROBE = (
    "from holdem.core.contracts import RoundClosed; "
    "from holdem.wallet.snapshot import SNAPSHOT_WRITES; "
    "print(RoundClosed.WRITES, SNAPSHOT_WRITES)"
)


def build(into: Path) -> Path:
    """Build the next release under ``into``; the path of its Python."""
    tree = into / "next-release"
    tree.mkdir(parents=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=SKIPPED)
        else:
            shutil.copy2(source, tree / name)
    run(["git", "apply", "--verbose", str(PATCH)], tree)
    uv = shutil.which("uv")
    if uv is None:
        raise RuntimeError("uv is not on PATH: make install provides it")
    venv = tree / ".venv"
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)}
    env.pop("VIRTUAL_ENV", None)
    run([uv, "sync", "--frozen", "--no-dev", "--project", str(tree)], tree, env)
    python = venv / "bin" / "python"
    said = run([str(python), "-c", PROBE], tree).strip()
    if said != WRITES:
        raise RuntimeError(f"the next release writes {said!r}, not {WRITES!r}")
    return python


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout
