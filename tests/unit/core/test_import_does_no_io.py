"""Importing every holdem.core module opens no file, reads no environment variable and loads
neither numba nor holdem.math (checked in a fresh interpreter: an audit hook sees every ``open``,
a recording ``os.environ`` every read, each attributed to core code when a core frame, not the
import system, is its nearest caller)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from holdem.core.strategy import shipped_table_path

CORE = Path(__file__).resolve().parents[3] / "shared/core/src/holdem/core"

PROBE = """
import importlib, json, os, sys

seen = []
HELPERS = {"os", "posixpath", "genericpath", "pathlib", "io", "codecs", "contextlib",
           "_collections_abc", "numpy"}

def ours(depth):
    # the nearest caller outside the file helpers (os, pathlib, io, numpy's np.load...) is core
    # code: a dependency's own reads (pydantic reading its settings) are not the core's
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.split(".")[0] not in HELPERS:
            return name.startswith("holdem.core")
        frame = frame.f_back
    return False

def hook(event, args):
    if event in ("open", "os.listdir", "os.mkdir", "os.scandir") and ours(2):
        seen.append([event, str(args[0])])

class Recording(type(os.environ)):
    def __getitem__(self, key):
        if ours(2):
            seen.append(["environ", key])
        return super().__getitem__(key)

os.environ.__class__ = Recording
sys.addaudithook(hook)
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite")
                or m.startswith("holdem.math"))
print(json.dumps({"seen": sorted(set(map(tuple, seen))), "loaded": loaded}))
"""


def core_modules() -> list[str]:
    names = []
    for path in sorted(CORE.rglob("*.py")):
        parts = ("holdem", "core", *path.relative_to(CORE).with_suffix("").parts)
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_importing_the_core_does_no_io_and_loads_no_numba() -> None:
    names = core_modules()
    assert "holdem.core.evaluator" in names and "holdem.core.strategy" in names
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(names)],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert result == {"seen": [], "loaded": []}


def test_the_probe_sees_a_read_made_by_core_code() -> None:
    """The probe is not blind: the optimal table's file, opened by an explicit call, is seen."""
    probe = PROBE.replace(
        "loaded = sorted(",
        "from holdem.core.strategy import optimal_table\noptimal_table()\nloaded = sorted(",
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(["holdem.core.strategy"])],
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(done.stdout.splitlines()[-1])["seen"]
    assert ["open", str(shipped_table_path())] in seen
