"""CPython's cyclic garbage collector, set for a process that folds records: a service, the live
auditor, `holdem audit` and every `holdem NAME` run as its own process.

A service or an auditor allocates a few container objects per record (a model, its dicts and
tuples) and frees nearly all of them by reference counting; the collector does not free them, it
only walks them. With CPython's default thresholds (700 allocations a young collection, 10 young
a middle one, 10 middle a full one) the streaming audit spent 1.07 s of its 4.0 s of CPU in 1,192
collections, its full collections walking the modules and pydantic's schemas again and again
(ADR 045). ``tune`` moves what was built at start-up (modules, schemas, settings) out of the
collector's reach (``gc.freeze``) and lets young objects accumulate 50,000 allocations before a
young collection; cycles are still collected, a few times a second under load, not hundreds.
"""

from __future__ import annotations

import gc

YOUNG = 50_000  # allocations of container objects between two young collections (CPython: 700)


def tune(young: int = YOUNG) -> tuple[int, int, int]:
    """Collect what start-up left, freeze what survives (never walked again, never freed: the
    process's own code and schemas) and raise the young threshold. Returns the thresholds it
    replaced, for ``untune``."""
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(young, before[1], before[2])
    return before


def untune(thresholds: tuple[int, int, int]) -> None:
    """Undo ``tune`` (a bench that tunes itself for one measurement inside a longer process)."""
    gc.unfreeze()
    gc.set_threshold(*thresholds)
