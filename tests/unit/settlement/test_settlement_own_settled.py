"""Issue 28's cost counter for settlement: it folds the Settled its own decide just built as
built (``Spec.evolve_own``), so its result is computed once a round, by the decision; a Settled
read from the log (a replay, or one another writer put there) is still recomputed, once."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.outbox import ListOutbox, handle
from support.rounds import RoundEvents

from holdem.core.contracts import Settled, dump
from holdem.core.wire.topics import Topics
from holdem.runtime.metrics import Metrics
from holdem.runtime.processor import Processor
from holdem.settlement import state as settlement_state
from holdem.settlement.app import settlement_spec
from holdem.settlement.settings import SettlementSettings
from holdem.settlement.state import SettlementState

ROUNDS = Topics().rounds


@pytest.fixture
def recomputed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The rounds whose Settled settlement's fold recomputed (``verify.result_of`` calls)."""
    calls: list[str] = []
    real = settlement_state.result_of

    def counting(bet: Any, commitment: str, decision: Any) -> Any:
        calls.append(bet.round_id)
        return real(bet, commitment, decision)

    monkeypatch.setattr(settlement_state, "result_of", counting)
    return calls


def settlement() -> Processor[SettlementState]:
    spec = settlement_spec(SettlementSettings())
    return Processor(spec, Topics(), ListOutbox(), Metrics(CollectorRegistry()))  # type: ignore[arg-type]


async def played(processor: Processor[SettlementState], rounds: int) -> list[bytes]:
    """``rounds`` rounds bet, dealt and called; every record settlement writes comes back to
    it (as from the rounds topic it reads). The rounds topic's records, in order."""
    log: list[bytes] = []
    outbox: ListOutbox = processor.outbox  # type: ignore[assignment]
    for n in range(rounds):
        game = RoundEvents(round_id=f"r{n}")
        for event in (game.bet_placed(), game.dealt(), game.called()):
            log.append(dump(event))
            await handle(processor, ROUNDS, 0, len(log) - 1, log[-1], b"p1")
            while outbox.records:  # its own records, back on its input
                record = outbox.records.pop(0)
                log.append(record.value)
                await handle(processor, ROUNDS, 0, len(log) - 1, record.value, b"p1")
    return log


async def test_settlement_never_recomputes_its_own_settled(recomputed: list[str]) -> None:
    processor = settlement()
    log = await played(processor, 3)
    settled = [raw for raw in log if b'"round.settled"' in raw]
    assert len(settled) == 3
    assert recomputed == []  # was one a round: the fold recomputed what decide had just built
    state = processor.partition(0).state
    assert [state.round("p1", f"r{n}").status for n in range(3)] == ["settled"] * 3  # type: ignore[union-attr]
    assert state.open_rounds == 0 and len(state.recent("p1")) == 3


async def test_a_settled_read_from_the_log_is_recomputed_once(recomputed: list[str]) -> None:
    log = await played(settlement(), 2)
    recomputed.clear()
    replayed = settlement()
    for raw in log:  # the replay path: none of these are its own events as built
        replayed.fold(ROUNDS, raw, b"p1", 0)
    assert recomputed == ["r0", "r1"]
    state = replayed.partition(0).state
    assert [state.round("p1", f"r{n}").status for n in range(2)] == ["settled"] * 2  # type: ignore[union-attr]


async def test_a_forged_settled_from_the_log_is_still_refused(recomputed: list[str]) -> None:
    processor = settlement()
    game = RoundEvents(round_id="r9")
    log = [dump(e) for e in (game.bet_placed(), game.dealt(), game.called())]
    for raw in log:
        processor.fold(ROUNDS, raw, b"p1", 0)
    twin = settlement()  # the honest Settled of the same round, as settlement decides it
    for offset, raw in enumerate(log):
        await handle(twin, ROUNDS, 0, offset, raw, b"p1")
    real: Settled = twin.outbox.parsed("rounds")[-1]  # type: ignore[attr-defined]
    assert recomputed == []
    forged = real.model_copy(update={"total_return": real.total_return + 1_000})
    processor.fold(ROUNDS, dump(forged), b"p1", 0)
    assert recomputed == ["r9"]  # the forgery's check
    assert processor.partition(0).state.round("p1", "r9").status == "open"  # type: ignore[union-attr]
