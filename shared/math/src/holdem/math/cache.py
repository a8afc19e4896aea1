"""The on-disk cache of what holdem-math computes: the batch evaluator's hash offsets and the
enumeration's per-situation totals, in ``$HOLDEM_CACHE_DIR`` or ``$XDG_CACHE_HOME/holdem``
(``~/.cache/holdem``). Read when a function asks for a cached result, never at import; a
missing, unreadable or read-only cache only means recomputing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt


def cache_dir() -> Path:
    """Where computed tables live: ``$HOLDEM_CACHE_DIR`` or ``~/.cache/holdem``."""
    base = os.environ.get("HOLDEM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "holdem"
    )
    return Path(base)


def save_arrays(path: Path, **arrays: npt.NDArray[Any]) -> None:
    """Write an npz atomically; a read-only home still works, it just recomputes next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
        savez: Any = np.savez  # numpy's stub does not type array keywords
        savez(tmp, **arrays)
        os.replace(tmp, path)
    except OSError:
        pass
