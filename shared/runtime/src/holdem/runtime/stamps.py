"""Record headers read into a ``Stamp`` once per distinct set, and a stamp's headers built once
per brand (issue 28): a service sees a handful of header sets (a type, an operator, a brand), and
read them anew for every record it consumed and every event it published."""

from __future__ import annotations

from holdem.core.wire.headers import Headers, Stamp

LIMIT = 1_024  # distinct header sets kept; past it, a new set is read each time, as before


class Stamps:
    """``Stamp.of`` and ``Stamp.headers`` remembered, for hashable header sets (aiokafka's and
    the in-memory transport's tuples); any other form is read every time."""

    def __init__(self, operator: str, limit: int = LIMIT) -> None:
        self.operator = operator
        self.limit = limit
        self._read: dict[object, Stamp] = {}
        self._written: dict[str | None, tuple[tuple[str, bytes], ...]] = {}

    def of(self, headers: Headers) -> Stamp:
        """``Stamp.of(headers)``."""
        if not isinstance(headers, tuple):
            return Stamp.of(headers)
        try:
            found = self._read.get(headers)
        except TypeError:  # a header value that is not hashable: read as it is
            return Stamp.of(headers)
        if found is None:
            found = Stamp.of(headers)
            if len(self._read) < self.limit:
                self._read[headers] = found
        return found

    def headers(self, brand: str | None) -> tuple[tuple[str, bytes], ...]:
        """The headers of a record this service publishes for ``brand``."""
        found = self._written.get(brand)
        if found is None:
            found = tuple(Stamp(self.operator, brand).headers())
            if len(self._written) < self.limit:
                self._written[brand] = found
        return found
