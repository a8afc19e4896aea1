"""The heap of a process that folds records (a service, the live auditor, `holdem audit`, every
`holdem NAME` run as its own process): CPython's cyclic garbage collector and glibc's malloc,
set for a process that runs for weeks.

**The collector** (ADR 045). A service or an auditor allocates a few container objects per record
(a model, its dicts and tuples) and frees nearly all of them by reference counting; the
collector does not free them, it only walks them. With CPython's default thresholds (700
allocations a young collection, 10 young a middle one, 10 middle a full one) the streaming audit
spent 1.07 s of its 4.0 s of CPU in 1,192 collections, its full collections walking the modules
and pydantic's schemas again and again. ``tune`` moves what was built at start-up (modules,
schemas, settings) out of the collector's reach (``gc.freeze``) and lets young objects accumulate
50,000 allocations before a young collection; cycles are still collected, a few times a second
under load, not hundreds.

**malloc's mmap threshold** (ADR 046). glibc serves a request of at least the threshold (128 KiB)
from a mapping of its own, given back to the system when freed; and when such a block is freed
it raises the threshold to the block's size, for good (up to 32 MiB). After one large snapshot
or fetch buffer had been freed, the next ones came from the heap, whose top is given back only
when it is free: the soak's wallet and auditor held their resident memory at one of two levels
24 MB apart for the rest of the hour. ``tune`` sets the threshold (which ends the raising), so
every large block is mapped and unmapped, and resident memory follows what is held.
"""

from __future__ import annotations

import ctypes
import gc

YOUNG = 50_000  # allocations of container objects between two young collections (CPython: 700)
MMAP_THRESHOLD = 128 * 1024  # glibc's default start, kept fixed
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def tune(young: int = YOUNG) -> tuple[int, int, int]:
    """Collect what start-up left, freeze what survives (never walked again, never freed: the
    process's own code and schemas), raise the young threshold and fix malloc's mmap threshold.
    Returns the collector's thresholds it replaced, for ``untune``."""
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(young, before[1], before[2])
    fix_mmap_threshold()
    return before


def untune(thresholds: tuple[int, int, int]) -> None:
    """Undo ``tune``'s collector settings (a bench that tunes itself for one measurement inside a
    longer process). malloc's threshold stays fixed: glibc has no way back to its raising."""
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def fix_mmap_threshold(size: int = MMAP_THRESHOLD) -> bool:
    """``mallopt(M_MMAP_THRESHOLD, size)``; False where the C library is not glibc (nothing set)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, size))
