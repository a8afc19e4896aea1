"""`make bench`: run every bench/bench_*.py in turn; each prints its figures beside a baseline.
Named arguments run only the benches whose names hold one; a bench in ON_REQUEST runs only when
named (bench_scale: a broker and the services per instance count, ``make bench-scale``)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

ON_REQUEST = frozenset({"bench_scale"})

if __name__ == "__main__":
    only = sys.argv[1:]
    for path in sorted(Path(__file__).parent.glob("bench_*.py")):
        if only and not any(name in path.stem for name in only):
            continue
        if path.stem in ON_REQUEST and not any(name in path.stem for name in only):
            continue
        print(f"== {path.stem}", flush=True)
        runpy.run_path(str(path), run_name="__main__")
