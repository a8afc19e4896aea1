"""An exact window of the latest keys: what the streaming audit remembers of ids, idempotency
keys and ended sessions instead of the whole log. Exact, not a Bloom filter: a false positive
would be a false alarm (ADR 040)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

KEPT = 65_536  # keys a window holds; the oldest leaves first


class Window(Generic[K, V]):
    """The ``size`` keys seen last, each with a value; ``on_leave(key, value)`` is called for a
    key pushed out (and for every key at ``drain``), so a count can be judged when it is final."""

    def __init__(self, size: int = KEPT, on_leave: Callable[[K, V], None] | None = None) -> None:
        self.size = size
        self.on_leave = on_leave
        self._items: OrderedDict[K, V] = OrderedDict()

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K, default: V | None = None) -> V | None:
        return self._items.get(key, default)

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._leave(*self._items.popitem(last=False))

    def first(self, key: K, value: V) -> V | None:
        """The value ``key`` has, left where it is; if none, None after putting ``value`` as the
        latest: ``get`` then ``put`` in one look-up, for a check made on every record."""
        items = self._items
        found = items.get(key)
        if found is None:
            items[key] = value
            while len(items) > self.size:
                self._leave(*items.popitem(last=False))
        return found

    def pop(self, key: K) -> V | None:
        return self._items.pop(key, None)

    def items(self) -> Iterator[tuple[K, V]]:
        return iter(list(self._items.items()))

    def drain(self) -> None:
        while self._items:
            self._leave(*self._items.popitem(last=False))

    def __getstate__(self) -> dict[str, Any]:
        """A checkpoint's pickle (ADR 041) names the owner of ``on_leave`` and its method, not
        the bound method (which would need ``getattr`` in the restricted unpickler)."""
        state = dict(self.__dict__)
        leave = self.on_leave
        if leave is not None:
            owner, name = getattr(leave, "__self__", None), getattr(leave, "__name__", "")
            if owner is None or getattr(owner, name, None) != leave:
                raise TypeError(f"a window's on_leave must be a method to pickle: {leave!r}")
            state["on_leave"] = (owner, name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        leave = state.get("on_leave")
        if leave is not None:
            owner, name = leave
            state = {**state, "on_leave": getattr(owner, name)}
        self.__dict__.update(state)

    def _leave(self, key: K, value: V) -> None:
        if self.on_leave is not None:
            self.on_leave(key, value)
