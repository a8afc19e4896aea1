"""A persistent map: ``set`` returns a new map sharing all but one small bucket with the old one."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# Two levels of 64 buckets: an update copies two 64-slot tuples and one bucket of ~n/4096 keys,
# so folding the log stays linear in the number of events instead of events x rounds.
_FAN = 64


class PMap(Mapping[K, V], Generic[K, V]):
    """An immutable mapping with a cheap functional update, for pure ``evolve`` functions.

    >>> a = PMap[str, int]().set("r1", 1)
    >>> b = a.set("r2", 2)
    >>> dict(a), dict(b), len(b)
    ({'r1': 1}, {'r1': 1, 'r2': 2}, 2)
    """

    __slots__ = ("_size", "_tree")

    def __init__(self) -> None:
        empty: Mapping[K, V] = {}
        self._tree: tuple[tuple[Mapping[K, V], ...], ...] = ((empty,) * _FAN,) * _FAN
        self._size = 0

    @staticmethod
    def _where(key: K) -> tuple[int, int]:
        h = hash(key)
        return h % _FAN, (h // _FAN) % _FAN

    def set(self, key: K, value: V) -> PMap[K, V]:
        """A map with ``key`` bound to ``value``; this one is unchanged."""
        i, j = self._where(key)
        branch = self._tree[i]
        bucket = dict(branch[j])
        grown = key not in bucket
        bucket[key] = value
        new: PMap[K, V] = PMap.__new__(PMap)
        new._tree = (*self._tree[:i], (*branch[:j], bucket, *branch[j + 1 :]), *self._tree[i + 1 :])
        new._size = self._size + grown
        return new

    def delete(self, key: K) -> PMap[K, V]:
        """A map without ``key`` (this one if it has no such key); this one is unchanged."""
        i, j = self._where(key)
        branch = self._tree[i]
        if key not in branch[j]:
            return self
        bucket = dict(branch[j])
        del bucket[key]
        new: PMap[K, V] = PMap.__new__(PMap)
        new._tree = (*self._tree[:i], (*branch[:j], bucket, *branch[j + 1 :]), *self._tree[i + 1 :])
        new._size = self._size - 1
        return new

    def __getitem__(self, key: K) -> V:
        i, j = self._where(key)
        return self._tree[i][j][key]

    def __contains__(self, key: object) -> bool:
        try:
            i, j = self._where(key)  # type: ignore[arg-type]
        except TypeError:
            return False
        return key in self._tree[i][j]

    def __iter__(self) -> Iterator[K]:
        for branch in self._tree:
            for bucket in branch:
                yield from bucket

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"PMap({dict(self)!r})"
