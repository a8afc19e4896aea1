"""Which brand each open round of one partition belongs to (ADR 021), so that every record of a
round carries its brand, the ones a timer or another service makes included.

A round's brand is the one its start carries: the wallet's BetPlaced (or, in seamless mode, its
DebitRequested), stamped from the PlaceBet's ``brand`` header. It is forgotten when the round
ends, and at most MAX_BRANDS open rounds are remembered per partition (the oldest go first).

>>> from datetime import UTC, datetime
>>> from holdem.core.contracts import Malfunction
>>> brands = Brands()
>>> env = dict(event_id="e1", player_id="p1", round_id="r1", occurred_at=datetime.now(UTC))
>>> brands.follow(Malfunction(**env, source="t", reason="x"), "acme-eu")  # not a start
>>> brands.dump()
{}
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from holdem.core.contracts.base import Envelope, Message

BRAND_STARTS = frozenset({"round.bet_placed", "seamless.debit_requested"})
ROUND_ENDS = frozenset({"round.settled", "round.voided"})
MAX_BRANDS = 4096


class Brands:
    """The brands of one partition's open rounds, by ``player_id/round_id``."""

    def __init__(self, known: Mapping[str, str] | None = None) -> None:
        self._open: OrderedDict[str, str] = OrderedDict(list((known or {}).items())[-MAX_BRANDS:])

    def follow(self, message: Envelope, brand: str | None) -> None:
        """Remember the brand of a round that starts (its first brand stays), forget it when
        the round ends."""
        if not isinstance(message, Message) or message.round_id is None:
            return
        kind = message.type  # type: ignore[attr-defined]
        name = f"{message.player_id}/{message.round_id}"
        if kind in ROUND_ENDS:
            self._open.pop(name, None)
        elif kind in BRAND_STARTS and brand is not None and name not in self._open:
            self._open[name] = brand
            while len(self._open) > MAX_BRANDS:
                self._open.popitem(last=False)

    def of(self, event: Envelope, fallback: str | None) -> str | None:
        """The brand to stamp on ``event``: its round's, else ``fallback`` (the input's: a
        reply, a refusal, a deposit made with a brand header)."""
        if isinstance(event, Message) and event.round_id is not None:
            found = self._open.get(f"{event.player_id}/{event.round_id}")
            if found is not None:
                return found
        return fallback

    def dump(self) -> dict[str, str]:
        """What a snapshot keeps."""
        return dict(self._open)
