"""Issue 28's cost counters on a service's own loop (in memory): each record the wallet consumes
and reads is parsed from its bytes once, and of its own events, which come back to it on the
topics it reads, none is validated again (it takes them back as the objects it built:
holdem.runtime.echoes). The counts do not depend on the machine: a change that adds a parse
fails here and must say why."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from support.wallet import deposit, place_bet, round_events, verified_settled
from support.wallet_app import wallet

from holdem.core import contracts


class CountingAdapter:
    """A contracts adapter that counts ``validate_json`` by the record's ``type``."""

    def __init__(self, adapter: Any, counts: Counter[str]) -> None:
        self._adapter, self._counts = adapter, counts

    def validate_json(self, raw: bytes | str, **kwargs: Any) -> Any:
        try:
            kind = str(json.loads(raw).get("type"))
        except (ValueError, AttributeError):
            kind = "unreadable"
        self._counts[kind] += 1
        return self._adapter.validate_json(raw, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    for role, adapter in list(contracts.ADAPTERS.items()):
        monkeypatch.setitem(contracts.ADAPTERS, role, CountingAdapter(adapter, counts))
    return counts


async def test_the_wallet_parses_each_record_it_reads_once_and_never_its_own_events(
    validations: Counter[str],
) -> None:
    events = round_events("r1")
    async with wallet() as w:
        await w.send("commands", deposit(10_000))
        await w.send("commands", place_bet("r1", ante=1_000, aa_bonus=500))
        await w.send("rounds", events.dealt())
        await w.send("rounds", events.called())
        await w.send("rounds", verified_settled())
        counted = Counter(validations)
        written = [json.loads(raw)["type"] for role in ("wallet", "rounds") for raw in w.seen[role]]

    consumed = ("command.deposit", "command.place_bet", "round.dealt", "round.called")
    consumed += ("round.settled",)
    own = set(written) - set(consumed)
    assert {"wallet.payout_credited", "round.bet_placed", "round.closed"} <= own
    # Own events validated again: none. Its BetPlaced, which the wallet reads (for Rebet, and to
    # rebuild), comes back as the exact bytes it published and is taken back as the object it
    # built (holdem.runtime.echoes); it was validated once a round before.
    assert {kind: counted[kind] for kind in own if counted[kind]} == {}
    assert {kind: counted[kind] for kind in consumed} == dict.fromkeys(consumed, 1)


def test_a_v1_round_closed_is_validated_once_as_what_it_is(validations: Counter[str]) -> None:
    """round.closed as this release writes it (v1, ADR 032): its version is read before it is
    validated, so it is validated once, as v1, and read as v2; it was validated twice (refused
    as v2, then its upcast validated)."""
    v1 = {"type": "round.closed", "version": 1, "event_id": "e1", "player_id": "p1",
          "round_id": "r1", "occurred_at": "2026-12-02T00:00:00Z", "outcome": "settled",
          "currency": "EUR", "staked": 1_500, "returned": 4_000}  # fmt: skip
    message = contracts.parse("rounds", json.dumps(v1).encode())
    assert (message.version, message.net) == (2, 2_500)
    v2 = contracts.parse("rounds", json.dumps({**v1, "version": 2, "net": 2_500}).encode())
    assert v2 == message
    assert validations == Counter({"round.closed": 2})  # one each
