"""Kafka record headers: the message ``type``, and who a record is for: the operator (tenant) and
the brand.

They travel beside the body, like the ``type`` header, so that no released contract changes
(ADR 021). Every record a service publishes carries ``operator``; a record of a round whose bet
named a brand carries ``brand``. The operator's SDK puts both on its commands and queries; a
command whose ``operator`` names another operator than the deployment's is refused, one without
it is accepted (clients from before ADR 021).

>>> stamp = Stamp.of([("type", b"command.call"), ("operator", b"acme"), ("brand", b"acme-eu")])
>>> stamp.operator, stamp.brand, stamp.problem()
('acme', 'acme-eu', None)
>>> Stamp("acme", None).headers()
[('operator', b'acme')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from holdem.core.wire.ids import ID

TYPE_HEADER = "type"  # every record we publish names its message type, so readers skip unparsed
OPERATOR_HEADER = "operator"
BRAND_HEADER = "brand"
DEFAULT_OPERATOR = "default"  # a deployment without a topic prefix (holdem.ops.tenants)
BRAND_ID = ID  # a brand is an id of the contracts' alphabet

Headers = Iterable[tuple[str, bytes]] | Mapping[str, Any] | None


@dataclass(frozen=True)
class Stamp:
    """The operator and brand a record names (``None``: no such header)."""

    operator: str | None = None
    brand: str | None = None
    malformed: str | None = None  # a header that is not text: what is wrong with it

    @classmethod
    def of(cls, headers: Headers) -> Stamp:
        """Read from aiokafka's ``[(name, bytes)]`` or faststream's ``{name: str | bytes}``;
        the first header of each name counts."""
        pairs = headers.items() if isinstance(headers, Mapping) else headers or ()
        found: dict[str, str] = {}
        for name, value in pairs:
            if name not in (OPERATOR_HEADER, BRAND_HEADER) or name in found:
                continue
            if isinstance(value, bytes | bytearray):
                try:
                    value = bytes(value).decode()
                except UnicodeDecodeError:
                    return cls(malformed=f"header {name!r} is not UTF-8")
            if not isinstance(value, str):
                return cls(malformed=f"header {name!r} is not text")
            found[name] = value
        return cls(found.get(OPERATOR_HEADER), found.get(BRAND_HEADER))

    def problem(self) -> str | None:
        """Why these headers are unusable (not an operator or brand id), or None.

        An operator header is only compared with the deployment's (any other text is another
        operator); a brand is passed on to every record of its round, so it must be an id.

        >>> Stamp("acme", "acme eu").problem()
        "header 'brand' is not a brand id: 'acme eu'"
        """
        if self.malformed is not None:
            return self.malformed
        if self.brand is not None and not BRAND_ID.fullmatch(self.brand):
            return f"header {BRAND_HEADER!r} is not a brand id: {self.brand[:80]!r}"
        return None

    def headers(self) -> list[tuple[str, bytes]]:
        """The record headers that carry this stamp (aiokafka's form)."""
        found = []
        if self.operator is not None:
            found.append((OPERATOR_HEADER, self.operator.encode()))
        if self.brand is not None:
            found.append((BRAND_HEADER, self.brand.encode()))
        return found


def operator_of_prefix(prefix: str) -> str:
    """The operator a deployment serves: its topic prefix (its tenant), ``default`` without one.

    >>> operator_of_prefix("acme"), operator_of_prefix("")
    ('acme', 'default')
    """
    return prefix or DEFAULT_OPERATOR
