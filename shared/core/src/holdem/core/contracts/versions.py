"""Rolling upgrades (ADR 032): the versions of a message type a release reads and the one it
writes.

A model's ``version`` Literal is its newest version; the older ones it still reads are the keys
of its ``UPCASTS`` (``UPCASTS[k]``: a v``k`` body as the v``k+1`` body it would be), so the code
sees the newest shape only. Each older version also has its model in ``OLDER`` (that version's
fields and checks): ``holdem.core.contracts.parse`` chooses the model by the record's
``version`` before it validates, so that an older record is validated once, as what it is, and
then upcast (``from_older``), not refused as the newest and validated again. A version it
neither is nor upcasts fails validation: a dead letter with its metric, never misread. ``WRITES``
is the version this release writes, which ``DOWNCASTS`` (``DOWNCASTS[k]``: a v``k`` body as the
v``k-1`` one) brings the model down to. A new version is first read by one release and written
by the next, so that while a rolling upgrade runs, and when it is rolled back, every instance
reads what any other writes (expand, then contract).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeAlias, cast

from pydantic import BaseModel

Body: TypeAlias = dict[str, Any]
Step: TypeAlias = Callable[[Body], Body]


_FIELDS: dict[type[BaseModel], frozenset[str]] = {}  # each model's field names, once


class Versioned(BaseModel):
    """Mix in before the envelope class: ``class RoundClosed(Versioned, RoundEvent)``."""

    UPCASTS: ClassVar[Mapping[int, Step]] = {}
    OLDER: ClassVar[Mapping[int, type[BaseModel]]] = {}  # a model for each key of UPCASTS
    DOWNCASTS: ClassVar[Mapping[int, Step]] = {}
    WRITES: ClassVar[int | None] = None  # None: the newest

    @classmethod
    def newest(cls) -> int:
        return int(cls.model_fields["version"].default)

    @classmethod
    def reads(cls) -> frozenset[int]:
        return frozenset({cls.newest(), *cls.UPCASTS})

    @classmethod
    def from_older(cls, older: BaseModel) -> Self:
        """A record validated as an older version (its model in ``OLDER``) as the newest: its
        fields through ``UPCASTS``, not validated again. What an upcast adds is computed from
        fields the older model validated, so the newest model's checks hold of it (each
        versioned model's test compares this with the newest's validation of the upcast
        record). Built as ``model_construct`` builds it (the fields, the fields set, no extra,
        no private attributes) without its walk over every field when the body holds them all
        and the model has no post-init or private attributes; else by ``model_construct``."""
        body, _ = _upcast(cls, older.__dict__, older.__dict__["version"])
        fields_set = older.model_fields_set | (body.keys() - older.__dict__.keys())
        names = _FIELDS.get(cls) or _FIELDS.setdefault(cls, frozenset(cls.model_fields))
        if body.keys() != names or cls.__pydantic_post_init__ or cls.__private_attributes__:
            return cast(Self, cls.model_construct(fields_set, **body))  # pragma: no cover
        newest: Self = cls.__new__(cls)
        object.__setattr__(newest, "__dict__", body)
        object.__setattr__(newest, "__pydantic_fields_set__", fields_set)
        object.__setattr__(newest, "__pydantic_extra__", None)
        object.__setattr__(newest, "__pydantic_private__", None)
        return newest

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
    body, version = _upcast(model, body, version)
    return body if version == model.newest() else None


def _upcast(model: type[Versioned], body: Body, version: int) -> tuple[Body, int]:
    """``body`` at ``version`` through each upcast there is from it; the version it is then."""
    while version in model.UPCASTS:
        body = {**model.UPCASTS[version](body), "version": version + 1}
        version += 1
    return body, version
