"""A reference operator wallet for the seamless mode (ADR 015), with faults to inject.

``OperatorWallet`` is what an operator's side of the bridge must do: keep each player's balance,
apply every ``tx_id`` once (a request sent again gets the first answer again), and treat a
rollback seen before its debit as "refuse that debit when it comes". ``FaultyOperator`` puts it
behind an unreliable line: seeded silence (the request is lost), dropped answers (applied, the
answer is lost), duplicates, rejections and delays that deliver answers late and out of order.
``holdem.client.seamless_run`` connects it to Kafka as the operator principal.

>>> from datetime import UTC, datetime
>>> wallet = OperatorWallet({("p1", "EUR"): 100})
>>> debit = DebitRequested(event_id="e1", player_id="p1", round_id="r1", tx_id="t1",
...     occurred_at=datetime(2026, 1, 1, tzinfo=UTC), currency="EUR", amount=40, ante=10,
...     aa_bonus=10, call_hold=20, command_id="c1", requested_ante=10, requested_aa_bonus=10,
...     fingerprint="0" * 32, expires_at=datetime(2026, 1, 1, tzinfo=UTC))
>>> [r.type for r in wallet.answer(debit) + wallet.answer(debit)], wallet.balance("p1", "EUR")
(['seamless.debited', 'seamless.debited'], 60)
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from holdem.core.contracts.seamless import (
    Credited,
    CreditRequested,
    Debited,
    DebitRejected,
    DebitRejection,
    DebitRequested,
    RollbackRequested,
    RolledBack,
    RoundClosedAcknowledged,
    RoundClosedNotice,
    SeamlessReply,
    SeamlessRequest,
)

RANDOM_REJECTIONS = (
    DebitRejection.LIMIT_EXCEEDED,
    DebitRejection.SESSION_EXPIRED,
    DebitRejection.PLAYER_BLOCKED,
)


@dataclass
class OperatorWallet:
    """Balances per (player, currency), minor units; every transaction applied at most once."""

    balances: dict[tuple[str, str], int] = field(default_factory=dict)
    answers: dict[str, SeamlessReply] = field(default_factory=dict)  # tx_id -> its answer
    debited: dict[str, DebitRequested] = field(default_factory=dict)  # applied, not reversed
    reversed: set[str] = field(default_factory=set)  # debit tx_ids rolled back (seen or not)
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    reject_rate: float = 0.0  # the share of debits refused for a reason other than funds
    opening: int = 0  # the balance of a player not seen before
    # Responsible-gaming wager limits per (player, currency): the most his debits applied and
    # not rolled back may add up to; a debit beyond it is refused ``limit_exceeded``.
    limits: dict[tuple[str, str], int] = field(default_factory=dict)
    wagered: dict[tuple[str, str], int] = field(default_factory=dict)
    # Round-closed notices (ADR 028): how many each round got, and every transaction that
    # reached us for a round already closed (a game server must send none).
    closes: dict[str, int] = field(default_factory=dict)
    out_of_order: list[SeamlessRequest] = field(default_factory=list)

    def balance(self, player_id: str, currency: str) -> int:
        return self.balances.get((player_id, currency), self.opening)

    def answer(self, request: SeamlessRequest) -> list[SeamlessReply]:
        """The answer to one request: the recorded one for a tx_id already seen."""
        if isinstance(request, RoundClosedNotice):
            return [self._close(request)]
        if not isinstance(request, DebitRequested | CreditRequested | RollbackRequested):
            return []  # a ReplyRefused: the wallet telling us about an answer it refused
        if self.closes.get(request.round_id):
            self.out_of_order.append(request)
        known = self.answers.get(request.tx_id)
        if known is None:
            known = self.answers[request.tx_id] = self._apply(request)
        return [known]

    def _apply(self, request: DebitRequested | CreditRequested | RollbackRequested) -> Any:
        key = (request.player_id, request.currency)
        if isinstance(request, DebitRequested):
            refusal = self._refusal(request)
            if refusal is not None:
                return _reply(DebitRejected, request, reason=refusal[0], detail=refusal[1])
            self.balances[key] = self.balance(*key) - request.amount
            self.wagered[key] = self.wagered.get(key, 0) + request.amount
            self.debited[request.tx_id] = request
            return _reply(Debited, request)
        if isinstance(request, CreditRequested):
            self.balances[key] = self.balance(*key) + request.amount
            return _reply(Credited, request)
        self.reversed.add(request.debit_tx_id)
        debit = self.debited.pop(request.debit_tx_id, None)
        if debit is not None:
            self.balances[key] = self.balance(*key) + debit.amount
            self.wagered[key] -= debit.amount
        return _reply(RolledBack, request)

    def _close(self, notice: RoundClosedNotice) -> SeamlessReply:
        """Count the notice (a resend of it counts again: the tests say a round gets one) and
        acknowledge it; its transactions must be ones this wallet answered."""
        self.closes[notice.round_id] = self.closes.get(notice.round_id, 0) + 1
        for tx in (notice.debit_tx_id, notice.final_tx_id):
            if tx not in self.answers:
                self.out_of_order.append(notice)  # closing a transaction we never saw
        reply: SeamlessReply = _reply(RoundClosedAcknowledged, notice)
        return reply

    def _refusal(self, debit: DebitRequested) -> tuple[DebitRejection, str] | None:
        if debit.tx_id in self.reversed:
            return DebitRejection.OTHER, "rolled back before it arrived"
        key = (debit.player_id, debit.currency)
        if self.balance(*key) < debit.amount:
            return DebitRejection.INSUFFICIENT_FUNDS, ""
        limit = self.limits.get(key)
        if limit is not None and self.wagered.get(key, 0) + debit.amount > limit:
            return DebitRejection.LIMIT_EXCEEDED, f"wager limit {limit} {debit.currency}"
        if self.rng.random() < self.reject_rate:
            return self.rng.choice(RANDOM_REJECTIONS), "injected"
        return None


def _reply(model: type[Any], request: SeamlessRequest, **fields: Any) -> Any:
    return model(
        event_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"reply/{request.tx_id}")),
        player_id=request.player_id,
        round_id=request.round_id,
        occurred_at=datetime.now(UTC),
        causation_id=request.event_id,
        correlation_id=request.correlation_id,
        tx_id=request.tx_id,
        currency=request.currency,
        amount=request.amount,
        **fields,
    )


@dataclass(frozen=True)
class Faults:
    """Probabilities per request (silence, drop, duplicate) and a delay, in steps, drawn
    uniformly up to ``max_delay`` for each answer: answers overtake one another."""

    silence: float = 0.0  # the request never reaches the operator
    drop: float = 0.0  # applied, but the answer is lost
    duplicate: float = 0.0  # the answer is delivered twice
    max_delay: int = 0
    reject_rate: float = 0.0


@dataclass
class FaultyOperator:
    """An ``OperatorWallet`` behind a seeded, unreliable line. ``receive`` a request, ``step``
    the line: each step delivers the answers whose delay ran out."""

    wallet: OperatorWallet
    faults: Faults = Faults()
    seed: int = 0
    in_flight: list[tuple[int, int, SeamlessReply]] = field(default_factory=list)
    now: int = 0
    stats: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.wallet.rng = random.Random(self.seed + 1)
        self.wallet.reject_rate = self.faults.reject_rate
        self._sent = 0

    def receive(self, request: SeamlessRequest) -> None:
        if self.rng.random() < self.faults.silence:
            self._count("silence")
            return
        answers = self.wallet.answer(request)
        if answers and self.rng.random() < self.faults.drop:
            self._count("drop")
            return
        if answers and self.rng.random() < self.faults.duplicate:
            self._count("duplicate")
            answers = answers * 2
        for answer in answers:
            due = self.now + self.rng.randint(0, self.faults.max_delay)
            self._sent += 1
            self.in_flight.append((due, self._sent, _fresh(answer, self._sent)))

    def step(self) -> list[SeamlessReply]:
        """Advance the line one step: the answers now due, oldest due first."""
        self.now += 1
        due = sorted(item for item in self.in_flight if item[0] <= self.now)
        self.in_flight = [item for item in self.in_flight if item[0] > self.now]
        return [answer for _, _, answer in due]

    def flush(self) -> list[SeamlessReply]:
        """Every answer still on the line."""
        found = sorted(self.in_flight)
        self.in_flight = []
        return [answer for _, _, answer in found]

    def _count(self, what: str) -> None:
        self.stats[what] = self.stats.get(what, 0) + 1


def _fresh(answer: SeamlessReply, n: int) -> SeamlessReply:
    """Each delivery its own event_id (a resent answer is a new record on the topic)."""
    return answer.model_copy(update={"event_id": f"{answer.event_id[:40]}.{n}"})
