"""Rolling upgrades (ADR 032): the versions of a message type a release reads and the one it
writes.

A model's ``version`` Literal is its newest version; the older ones it still reads are the keys
of its ``UPCASTS`` (``UPCASTS[k]``: a v``k`` body as the v``k+1`` body it would be), so the code
sees the newest shape only. A version it neither is nor upcasts fails validation: a dead letter
with its metric, never misread. ``WRITES`` is the version this release writes, which
``DOWNCASTS`` (``DOWNCASTS[k]``: a v``k`` body as the v``k-1`` one) brings the model down to. A
new version is first read by one release and written by the next, so that while a rolling
upgrade runs, and when it is rolled back, every instance reads what any other writes (expand,
then contract).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeAlias

from pydantic import BaseModel

Body: TypeAlias = dict[str, Any]
Step: TypeAlias = Callable[[Body], Body]


class Versioned(BaseModel):
    """Mix in before the envelope class: ``class RoundClosed(Versioned, RoundEvent)``."""

    UPCASTS: ClassVar[Mapping[int, Step]] = {}
    DOWNCASTS: ClassVar[Mapping[int, Step]] = {}
    WRITES: ClassVar[int | None] = None  # None: the newest

    @classmethod
    def newest(cls) -> int:
        return int(cls.model_fields["version"].default)

    @classmethod
    def reads(cls) -> frozenset[int]:
        return frozenset({cls.newest(), *cls.UPCASTS})

    def written(self) -> bytes:
        """The wire form at ``WRITES``: the model's own JSON when it is that version."""
        current = self.newest()
        target = self.WRITES if self.WRITES is not None else current
        if target == current:
            return self.model_dump_json().encode()
        body = self.model_dump(mode="json")
        while current > target:
            body = {**self.DOWNCASTS[current](body), "version": current - 1}
            current -= 1
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


# (Upcasting is done on the record's JSON by ``holdem.core.contracts.parse``, not in a model
# validator: a before or wrap validator hands pydantic a Python dict, whose strict checks would
# then refuse what the record's strict JSON rightly holds, a time as text.)
def upcast(model: type[Versioned], body: Body) -> Body | None:
    """``body`` of an older version ``model`` reads, as its newest version; None if it is not
    one (the newest itself, or a version this release does not know)."""
    version = body.get("version")
    if type(version) is not int or version not in model.UPCASTS:
        return None
    while version in model.UPCASTS:
        body = {**model.UPCASTS[version](body), "version": version + 1}
        version += 1
    return body if version == model.newest() else None
