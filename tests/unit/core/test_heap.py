"""The heap of a process that folds records (ADR 045, 046): start-up frozen, young
collections thousands of allocations apart instead of 700, every entry point tuning it before
its loop."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from holdem.core import cli, heap
from holdem.runtime import app

# A process of its own (pytest's collector is not ours to change): 200,000 container objects
# kept alive, as a fold keeps its state; young collections counted by gc.callbacks.
PROBE = """
import gc, json, sys
from holdem.core import heap
young = []
gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 0
                    and young.append(1))
before = gc.get_threshold()
if sys.argv[1] == "tuned":
    replaced = heap.tune()
    assert replaced == before, (replaced, before)
frozen = gc.get_freeze_count()
held = [{"n": i} for i in range(200_000)]
print(json.dumps({"young": len(young), "frozen": frozen, "threshold": gc.get_threshold()}))
"""


def probe(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_a_tuned_process_walks_its_young_objects_a_hundred_times_less() -> None:
    default, tuned = probe("default"), probe("tuned")
    assert default["young"] >= 200  # one every 700 allocations: about 285
    assert tuned["young"] <= 5  # one every 50,000: 4
    assert default["frozen"] == 0
    assert tuned["frozen"] > 1_000  # the modules' functions, classes, dicts
    assert tuned["threshold"][0] == heap.YOUNG
    assert tuned["threshold"][1:] == default["threshold"][1:]


def test_untune_gives_back_what_tune_replaced() -> None:
    script = (
        "import gc; from holdem.core import heap\n"
        "before = gc.get_threshold(); heap.untune(heap.tune())\n"
        "assert (gc.get_threshold(), gc.get_freeze_count()) == (before, 0)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_service_tunes_before_its_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Service:
        until_exit = False

        async def serve(self) -> None:
            pass

    def run(coroutine: Any) -> None:
        calls.append("loop")
        coroutine.close()

    monkeypatch.setattr(app.heap, "tune", lambda: calls.append("tune"))
    monkeypatch.setattr(app.asyncio, "run", run)
    app.run(Service())  # type: ignore[arg-type]
    assert calls == ["tune", "loop"]


def test_holdem_name_tunes_as_its_own_process_only(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    probe_entry = EntryPoint("probe", "json:dumps", cli.GROUP)
    monkeypatch.setattr(cli, "subcommands", lambda: {"probe": probe_entry})
    monkeypatch.setattr(cli.heap, "tune", lambda: calls.append("tune"))
    monkeypatch.setattr(sys, "argv", ["holdem", "probe", "x"])
    assert cli.main() == '["x"]'  # json.dumps(argv): the subcommand ran after the tuning
    assert calls == ["tune"]
    assert cli.main(["probe", "y"]) == '["y"]'  # called in a process that is not its own
    assert calls == ["tune"]


# glibc's own counter of mapped blocks (mallinfo2().hblks), read around a free of a 4 MiB block
# (which, left alone, raises the mmap threshold to 4 MiB) and a 2 MiB request after it.
MALLOC_PROBE = """
import ctypes, sys
from holdem.core import heap

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
libc.mallinfo2.restype = MallInfo2
if sys.argv[1] == "tuned":
    heap.tune()
libc.free(libc.malloc(4 << 20))
mapped = libc.mallinfo2().hblks
block = libc.malloc(2 << 20)
print(libc.mallinfo2().hblks - mapped)
libc.free(block)
"""


def mapped_after_a_large_free(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", MALLOC_PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def test_a_tuned_process_maps_every_large_block_even_after_a_larger_one_was_freed() -> None:
    assert mapped_after_a_large_free("default") == 0  # glibc raised its threshold: from the heap
    assert mapped_after_a_large_free("tuned") == 1  # mapped, given back to the system on free
