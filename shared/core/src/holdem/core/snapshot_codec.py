"""What the services' snapshot codecs share: loading a versioned body through a pydantic
``TypeAdapter`` derived from the state's types (an older version read as the current one it
would be), and the checks for decoded snapshot JSON (each returns the value it was given, typed,
or raises), which read the older versions."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import fields
from datetime import datetime
from operator import attrgetter
from typing import Annotated, Any, TypeVar, get_type_hints

from pydantic import AfterValidator, PlainSerializer, TypeAdapter, ValidationError

T = TypeVar("T")


class SnapshotError(ValueError):
    """Bytes that are not a snapshot the service can load: not JSON, another service's or an
    unknown version, or a field of the wrong type. A snapshot topic is an input like any other."""


def decoding(service: str, load: Callable[[], T]) -> T:
    """``load()``, with whatever a malformed snapshot makes it raise (a KeyError, TypeError or
    ValueError: JSON and contract errors are ValueErrors) turned into ``SnapshotError``."""
    try:
        return load()
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError) as error:
        raise SnapshotError(f"not a {service} snapshot: {type(error).__name__}: {error}") from None


def load_versioned(
    body: TypeAdapter[T],
    raw: bytes,
    service: str,
    version: int,
    upgrades: Mapping[int, Callable[[dict[str, Any]], bytes]],
) -> T:
    """``raw`` as the body of a ``service`` snapshot at ``version`` (checked strictly, as the
    contracts are), or at an older version that ``upgrades`` turns into the JSON of the current
    one; else ``SnapshotError`` naming whose or which version it is, or the ``ValidationError``
    of the field that is wrong (a ValueError: ``decoding`` turns it into SnapshotError)."""
    written = head_version(raw)
    if written != version and written in upgrades:  # an older body: the strict check would fail
        return _upgraded(body, json.loads(raw), service, version, upgrades)
    try:
        return body.validate_json(raw, strict=True)
    except ValidationError:
        document = json.loads(raw)
        old: Any = document.get("version") if isinstance(document, dict) else None
        if not (type(old) is int and old != version and old in upgrades):
            check_envelope(document, service, version)
            raise
        return _upgraded(body, document, service, version, upgrades)


def _upgraded(
    body: TypeAdapter[T],
    document: Any,
    service: str,
    version: int,
    upgrades: Mapping[int, Callable[[dict[str, Any]], bytes]],
) -> T:
    old = document.get("version") if isinstance(document, dict) else None
    if type(old) is not int or old not in upgrades:
        raise SnapshotError(f"unknown {service} snapshot version {old!r}")
    return body.validate_json(upgrades[old](check_envelope(document, service, old)), strict=True)


# How a body written by pydantic begins: its fields in their order, ``service`` and ``version``
# first (every service's ``Body``).
_HEAD = re.compile(rb'\{"service":"[a-z]+","version":(\d{1,9})[,}]')


def head_version(raw: bytes) -> int | None:
    """The version a snapshot body names at its head, without parsing the rest (None when it
    does not begin as a body does). A body of an older version then goes to its upgrade at
    once: its strict check, which fails on the version field, validated the whole document
    first (half of a wallet snapshot's load, since the wallet writes v6 and reads v7).

    >>> head_version(b'{"service":"wallet","version":6,"accounts":[]}')
    6
    >>> head_version(b'{"version":6,"service":"wallet"}') is None
    True
    """
    match = _HEAD.match(raw)
    return int(match[1]) if match else None


def row(cls: type[T]) -> Any:
    """The type of a dataclass ``cls`` written as the list of its fields' values, in their
    order, not as an object (a snapshot of many small records is then a third of the size),
    and read back through the fields' own types. Use it under ``TYPE_CHECKING`` as ``cls``."""
    hints = get_type_hints(cls, include_extras=True)
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
    shape: Any = tuple[tuple(hints[name] for name in names)]  # type: ignore[misc]
    values = attrgetter(*names) if len(names) > 1 else lambda v: (getattr(v, names[0]),)
    return Annotated[
        shape,
        AfterValidator(lambda values: cls(*values)),
        PlainSerializer(values, return_type=shape),
    ]


def named(values: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """A row of an older version's JSON (a list of ``len(names)`` values) as an object."""
    return dict(zip(names, items(values, len(names)), strict=True))


def record(value: Any) -> Any:
    """A record an older version kept as its wire text, as the JSON object it is (None stays
    None), for the contract's model to check."""
    return None if value is None else json.loads(text(value))


def check_envelope(body: Any, service: str, version: int) -> dict[str, Any]:
    """``body`` if it is a snapshot object of ``service`` at ``version``.

    >>> check_envelope({"service": "wallet", "version": 1}, "wallet", 1)
    {'service': 'wallet', 'version': 1}
    >>> check_envelope({"service": "wallet", "version": 2}, "wallet", 1)
    Traceback (most recent call last):
    ...
    holdem.core.snapshot_codec.SnapshotError: unknown wallet snapshot version 2
    """
    if not isinstance(body, dict) or body.get("service") != service:
        raise SnapshotError(f"not a {service} snapshot")
    if type(body.get("version")) is not int or body["version"] != version:
        raise SnapshotError(f"unknown {service} snapshot version {body.get('version')!r}")
    return body


def text(value: Any) -> str:
    if type(value) is not str:
        raise SnapshotError(f"expected a string, got {value!r:.40}")
    return value


def count(value: Any) -> int:
    """A non-negative integer (an amount in minor units, a bet, a limit)."""
    if type(value) is not int or value < 0:
        raise SnapshotError(f"expected a count, got {value!r:.40}")
    return value


def time(value: Any) -> datetime:
    """A time with its zone, as orjson writes a datetime."""
    at = datetime.fromisoformat(text(value))
    if at.tzinfo is None:
        raise SnapshotError(f"a time without its zone: {value!r:.40}")
    return at


def optional(check: Callable[[Any], T]) -> Callable[[Any], T | None]:
    return lambda value: None if value is None else check(value)


def one_of(*allowed: Any) -> Callable[[Any], Any]:
    """One of ``allowed``, of the same type (so ``0`` is not ``False``)."""

    def check(value: Any) -> Any:
        if not any(value == a and type(value) is type(a) for a in allowed):
            raise SnapshotError(f"expected one of {allowed}, got {value!r:.40}")
        return value

    return check


def items(value: Any, size: int | None = None) -> list[Any]:
    """A JSON array, of ``size`` items if given."""
    if not isinstance(value, list) or (size is not None and len(value) != size):
        raise SnapshotError(f"expected a list{f' of {size}' if size else ''}: {value!r:.40}")
    return value


def mapping(value: Any) -> dict[str, Any]:
    """A JSON object."""
    if not isinstance(value, dict):
        raise SnapshotError(f"expected an object: {value!r:.40}")
    return value
