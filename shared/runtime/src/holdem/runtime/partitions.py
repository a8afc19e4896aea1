"""One store for a service's partitions: each one's state and the brands of its open rounds
(what the runtime keeps beside the state, ADR 021), and their snapshots dumped and loaded
(``holdem.runtime.snapshots``). The processor folds and decides into it; the loop's jobs
(rebuild, checkpoint) load and dump it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from holdem.runtime.brands import Brands
from holdem.runtime.snapshots import Codec, Snapshot

S = TypeVar("S")


@dataclass
class Partition(Generic[S]):
    """One partition's state and what the runtime keeps beside it. A player's records all
    share one partition number (co-partitioning), so each partition is folded, decided and
    snapshotted on its own, and every step is handed the partition it works on."""

    number: int
    state: S
    brands: Brands = field(default_factory=Brands)


class PartitionStore(Generic[S]):
    """The partitions this instance holds, by number."""

    def __init__(self, initial_state: Callable[[], S], codec: Codec | None = None) -> None:
        self.initial_state = initial_state
        self.codec = codec  # None: never snapshotted (always a full replay)
        self.parts: dict[int, Partition[S]] = {}

    def partition(self, number: int) -> Partition[S]:
        """Partition ``number``, with a fresh state if it has none yet."""
        found = self.parts.get(number)
        if found is None:
            found = self.parts[number] = Partition(number, self.initial_state())
        return found

    @property
    def states(self) -> dict[int, S]:
        return {number: part.state for number, part in self.parts.items()}

    def reset(self, partitions: Iterable[int] | None = None) -> None:
        """Forget the state of ``partitions`` (default: all)."""
        for number in list(self.parts) if partitions is None else partitions:
            self.parts.pop(number, None)

    def brands_of(self, partition: int) -> dict[str, str]:
        """The brands of ``partition``'s open rounds (what its snapshot keeps)."""
        found = self.parts.get(partition)
        return found.brands.dump() if found is not None else {}

    def restore_brands(self, partition: int, brands: Mapping[str, str]) -> None:
        """Brands loaded from ``partition``'s snapshot (its replay adds those after it)."""
        self.partition(partition).brands = Brands(brands)

    def dump(self, service: str, partition: int, offsets: dict[str, int]) -> Snapshot:
        """``partition``'s snapshot, covering ``offsets`` (state topic -> where a replay
        starts); the store must have a codec."""
        assert self.codec is not None
        state = self.codec.dump(self.partition(partition).state)
        return Snapshot(service, partition, offsets, state, self.brands_of(partition))

    def load(self, raw: bytes, service: str, partition: int) -> Snapshot:
        """``partition``'s state and brands from a snapshot record; ValueError (nothing
        changed) when it is not a usable snapshot of this service's partition."""
        assert self.codec is not None
        snapshot = Snapshot.from_bytes(raw, service, partition)
        state = self.codec.load(snapshot.state)
        self.partition(partition).state = state
        self.restore_brands(partition, snapshot.brands)
        return snapshot
