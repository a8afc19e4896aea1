"""The seamless half of the audit (ADR 015): every debit the wallet asked of the operator's wallet
ends exactly once, by a refusal, one credit or one rollback, for the amount the round gives.

Written from the ADR's rules, not from the wallet's code: the audit must not share what it audits.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    CallReleased,
    Message,
    PayoutCredited,
    WalletRejected,
)
from holdem.core.contracts.seamless import (
    CreditRequested,
    Debited,
    DebitRejected,
    DebitRequested,
    RollbackRequested,
    SeamlessCredited,
    SeamlessDebited,
    SeamlessReply,
    SeamlessRolledBack,
)

RoundKey = tuple[str, str]


@dataclass
class Trail:
    """Everything the log says about one round's transactions with the operator."""

    debits: list[DebitRequested] = field(default_factory=list)
    credits: list[CreditRequested] = field(default_factory=list)
    rollbacks: list[RollbackRequested] = field(default_factory=list)
    debited: list[SeamlessDebited] = field(default_factory=list)
    credited: list[SeamlessCredited] = field(default_factory=list)
    rolled_back: list[SeamlessRolledBack] = field(default_factory=list)
    refused: list[WalletRejected] = field(default_factory=list)
    placed: list[BetPlaced] = field(default_factory=list)
    returned: int = 0  # the wallet's payout plus the call hold it released: what a credit owes
    answered_debited: bool = False  # the operator said Debited (it took the money)


_LISTS: dict[type[Any], str] = {
    DebitRequested: "debits",
    CreditRequested: "credits",
    RollbackRequested: "rollbacks",
    SeamlessDebited: "debited",
    SeamlessCredited: "credited",
    SeamlessRolledBack: "rolled_back",
    WalletRejected: "refused",
    BetPlaced: "placed",
}


# Tuples, not unions: ``isinstance`` of a union built at each call costs about 1 µs more.
RETURNED = (PayoutCredited, CallReleased)  # what a credit owes back
ANSWERS = (Debited, DebitRejected)  # the operator's answers to a debit


def trails(
    messages: Iterable[Message], replies: Iterable[SeamlessReply] = ()
) -> dict[RoundKey, Trail]:
    found: dict[RoundKey, Trail] = defaultdict(Trail)
    for m in messages:
        if m.round_id is None:
            continue
        trail = found[(m.player_id, m.round_id)]
        name = _LISTS.get(type(m))
        if name is not None:
            getattr(trail, name).append(m)
        if isinstance(m, RETURNED):
            trail.returned += m.amount
    for reply in replies:
        if isinstance(reply, Debited) and (reply.player_id, reply.round_id) in found:
            found[(reply.player_id, reply.round_id)].answered_debited = True
    return dict(found)


def seamless_violations(
    messages: Iterable[Message],
    replies: Iterable[SeamlessReply] = (),
    *,
    require_closed: bool = True,
) -> list[str]:
    """Every broken rule of the bridge, as sentences; empty when every debit ended once.
    ``messages``: what the wallet published (all its topics); ``replies``: the operator's."""
    replies = list(replies)
    found: list[str] = []
    for key, trail in sorted(trails(messages, replies).items()):
        name = "/".join(key)
        found += [f"{name}: {v}" for v in _trail_violations(trail, require_closed)]
    found += _reply_violations(replies)
    return found


def _trail_violations(t: Trail, require_closed: bool) -> Iterator[str]:
    moves = [*t.debited, *t.credited, *t.rolled_back]
    if not t.debits:
        if moves or t.credits or t.rollbacks:
            yield "money asked or moved for a round the wallet never asked a debit for"
        return
    debit_tx = {d.tx_id for d in t.debits}
    if len(debit_tx) > 1 or len({d.amount for d in t.debits}) > 1:
        yield f"{len(debit_tx)} debits asked for one round"
    debit = t.debits[0]
    for name, count in (
        ("debited", t.debited),
        ("credited", t.credited),
        ("rolled back", t.rolled_back),
    ):
        if len(count) > 1:
            yield f"{name} {len(count)} times"
    yield from _request_violations(t, debit)
    if t.placed and not t.debited:
        yield "BetPlaced without the operator's debit"
    if t.debited and t.debited[0].amount != debit.amount:
        yield f"debited {t.debited[0].amount}, asked {debit.amount}"
    ends = len(t.credited[:1]) + len(t.rolled_back[:1])
    if ends > 1:
        yield "both credited and rolled back"
    refused_only = not t.debited and bool(t.refused) and not t.rollbacks
    if require_closed and ends == 0 and not refused_only:
        yield "the debit never ended (no credit, rollback or refusal acknowledged)"
    if t.answered_debited and refused_only:
        yield "the operator took the stakes but the wallet neither used nor rolled them back"
    if t.credited and t.credited[0].amount != t.returned:
        yield f"credited {t.credited[0].amount}, the round returned {t.returned}"
    if t.rolled_back:
        expected = debit.amount if t.debited else 0
        if t.rolled_back[0].amount != expected or (
            t.rollbacks and t.rollbacks[0].amount != debit.amount
        ):
            yield f"rolled back {t.rolled_back[0].amount}, the ledger held {expected}"


def _request_violations(t: Trail, debit: DebitRequested) -> Iterator[str]:
    for kind, requests, done in (
        ("credit", t.credits, t.credited),
        ("rollback", t.rollbacks, t.rolled_back),
    ):
        if len({r.tx_id for r in requests}) > 1:
            yield f"{kind} asked under {len({r.tx_id for r in requests})} tx ids"
        if any(r.debit_tx_id != debit.tx_id for r in requests):
            yield f"a {kind} names another debit"
        if done and (not requests or done[0].tx_id != requests[0].tx_id):
            yield f"{kind} recorded without its request"
    if t.credits and t.rollbacks:
        yield "asked both a credit and a rollback"
    if t.debited and t.debited[0].tx_id != debit.tx_id:
        yield "debit recorded under another tx id"


def _reply_violations(replies: list[SeamlessReply]) -> Iterator[str]:
    """The operator's answers to one debit agree with one another."""
    answers: dict[str, set[str]] = defaultdict(set)
    for reply in replies:
        if isinstance(reply, ANSWERS):
            answers[reply.tx_id].add(reply.type)
    for tx, kinds in sorted(answers.items()):
        if len(kinds) > 1:
            yield f"the operator answered debit {tx} both ways: {sorted(kinds)}"
