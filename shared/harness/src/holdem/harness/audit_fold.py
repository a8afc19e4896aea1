"""The streaming audit (issue 31, ADR 040): the whole audit's invariants folded one record at a
time with bounded state, so a log of any length is audited in one pass.

Nothing is checked here that the whole audit (``holdem.harness.audit``) does not check with the
same code: a round's records are held until the round is done and then judged by
``round_violations``, the whole audit's own per-round checks; money, forced decks, blocking,
tables, sessions and event ids are the ``Watches`` both paths feed. What this module adds is
when a round is done, what is kept, and how the partial results of several partitions' folds
merge into one verdict (``AuditFold.merge``)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    Dealt,
    Message,
    RoundClosed,
    RoundVoided,
    Settled,
    StakeTaken,
    WalletRejected,
)
from holdem.core.contracts.promotions import FreeStakeTaken
from holdem.core.contracts.seamless import DebitRequested, RoundClosedNotice, SeamlessRolledBack
from holdem.harness.audit import (
    OPERATOR_VISIBLE,
    AuditReport,
    Unseal,
    json_of,
    operator_problem,
    round_key_of,
    round_violations,
)
from holdem.harness.audit_log import Record, RoundKey, in_log_order, rounds_of
from holdem.harness.audit_money import Book, add_books, conservation_violations
from holdem.harness.audit_watches import Watches
from holdem.harness.audit_window import KEPT, Window

OPEN_ROUNDS = 50_000  # rounds held at once; the oldest is judged as it stands beyond that
QUIET_MS = 5_000  # a round is done once the log is this far (record time) past its last record
SWEEP_EVERY = 1_024  # records between two looks for rounds that are done
# The topics a round's own records are on: one of them after the round was judged is reported.
ROUND_TOPICS = ("rounds", "vault", "wallet", "seamless_replies")


# What a message's type tells ``Pending`` (which of its flags it sets), worked out once per type:
# an ``isinstance`` that misses a pydantic model costs a few hundred ns, and most do.
_KINDS: dict[type, str] = {}


def kind_of(cls: type) -> str:
    """Which of ``Pending``'s flags a message of type ``cls`` sets ("" for none); the type's
    answer is that of its first message (``isinstance`` depends on the type alone)."""
    for kind, classes in (
        ("bet", (BetPlaced,)),
        ("ended", (Settled, RoundVoided)),
        ("closed", (RoundClosed,)),
        ("staked", (StakeTaken, FreeStakeTaken)),
        ("seamless", (DebitRequested,)),
        ("answered", (RoundClosedNotice, WalletRejected, SeamlessRolledBack)),
    ):
        if issubclass(cls, classes):
            return kind
    return ""


@dataclass
class Pending:
    """One round's records so far, and what they say about whether it is done."""

    records: list[Record] = field(default_factory=list)
    last: int = 0  # the latest record time, ms
    bet: bool = False
    ended: bool = False
    closed: bool = False  # round.closed (ADR 028), or nothing left to close
    staked: bool = False
    seamless: bool = False  # a debit was asked of the operator's wallet
    answered: bool = False  # ... and the round's business with it is over
    served: bool = False  # a record not on the commands topic: some service answered

    def add(self, record: Record) -> None:
        self.records.append(record)
        self.served = self.served or record.role != "commands"
        if record.timestamp > self.last:
            self.last = record.timestamp
        cls = type(record.message)
        kind = _KINDS.get(cls)
        if kind is None:
            kind = _KINDS[cls] = kind_of(cls)
        if kind == "bet":
            self.bet = True
        elif kind == "ended":
            self.ended = True
        elif kind == "closed":
            self.closed = True
        elif kind == "staked":
            self.staked = True
        elif kind == "seamless":
            self.seamless = True
        elif kind == "answered":
            self.answered = True

    def done(self) -> bool:
        """Nothing more is due: no bet (a refused or stray command), or ended and closed (and,
        with the operator's wallet, told so)."""
        if self.seamless and not self.answered:
            return False
        if not self.bet:
            return True
        return self.ended and (self.closed or not self.staked)


class AuditFold:
    """``feed`` every record (each partition in offset order; the reader interleaves partitions
    by record time), then ``partial`` (a JSON-able summary) or ``report``. ``merge`` joins the
    partials of folds over disjoint shares of the partitions into one report."""

    def __init__(
        self,
        *,
        require_ended: bool = True,
        operator: str | None = None,
        unseal: Unseal | None = None,
        open_rounds: int = OPEN_ROUNDS,
        quiet_ms: int = QUIET_MS,
        kept: int = KEPT,
    ) -> None:
        self.require_ended = require_ended
        self.operator = operator
        self.unseal = unseal
        self.open_rounds = open_rounds
        self.quiet_ms = quiet_ms
        self.watches = Watches(kept)
        self.pending: dict[RoundKey, Pending] = {}
        self.judged: Window[RoundKey, bool] = Window(kept)
        self.found: list[str] = []
        self.records = self.rounds = self.ended = self.forced = 0
        self.clock = 0  # the latest record time fed, ms
        self.seamless = False
        self.peak = 0  # the most rounds held at once

    def feed(self, record: Record) -> None:
        self.records += 1
        if self.operator is not None:
            problem = operator_problem(record, self.operator)
            if problem is not None:
                self.found.append(problem)
        self.watches.feed(record)
        key = _key_of(record)
        if key is not None:
            self._hold(key, record)
        if record.role != "tables" and record.timestamp > self.clock:  # tables: read whole
            self.clock = record.timestamp  # and first by every share: not the log's time
        if self.records % SWEEP_EVERY == 0:
            self._sweep()

    def _hold(self, key: RoundKey, record: Record) -> None:
        if key in self.judged:
            if record.role in ROUND_TOPICS:
                kind = getattr(record.message, "type", "a record")
                where = f"{record.role}[{record.partition}]@{record.offset}"
                self.found.append(f"{'/'.join(key)}: {kind} at {where} after the round was done")
            return
        pending = self.pending.get(key)
        if pending is None:
            pending = self.pending[key] = Pending()
            if len(self.pending) > self.open_rounds:
                oldest = next(iter(self.pending))
                self._judge(oldest, self.pending.pop(oldest))
            if len(self.pending) > self.peak:  # only a new round adds to those held
                self.peak = len(self.pending)
        pending.add(record)
        self.seamless = self.seamless or pending.seamless

    def _sweep(self) -> None:
        """Judge every round done and quiet for ``quiet_ms`` of record time that some service has
        answered. A round of commands only waits, as on ``tick``: a wallet more than ``quiet_ms``
        behind the rest of the log (the soak of 2026-12-06 at load 14) answers its bet later,
        and judging the bet alone reported every record of a sound round as late (86 rounds,
        774 findings, every round ended). One never answered is judged when it leaves the window
        of open rounds, or at the end of the period."""
        horizon = self.clock - self.quiet_ms
        ready = [k for k, p in self.pending.items() if p.served and p.last <= horizon and p.done()]
        for key in ready:
            self._judge(key, self.pending.pop(key))

    def tick(self, now_ms: int) -> None:
        """The live auditor's clock on a quiet log (wall time less a grace, ms): judge the rounds
        done and quiet for ``quiet_ms`` before ``now_ms`` that some service has answered. A round
        of commands only is not judged: while the services are away (a broker outage) its bet
        is still to be answered, and judging it would report every later record of it. The
        record-time clock (``clock``) is left alone: only records move it."""
        horizon = now_ms - self.quiet_ms
        ready = [k for k, p in self.pending.items() if p.served and p.last <= horizon and p.done()]
        for key in ready:
            self._judge(key, self.pending.pop(key))

    def _judge(self, key: RoundKey, pending: Pending) -> None:
        records = in_log_order(pending.records)  # sorted once: every check below reads it so
        rounds = rounds_of(records, ordered=True)
        self.found += round_violations(
            records,
            require_ended=self.require_ended,
            unseal=self.unseal,
            seamless=self.seamless,
            rounds=rounds,
        )
        for log in rounds.values():
            if log.bets:
                self.rounds += 1
                self.ended += bool(log.ends)
        self.forced += any(isinstance(r.message, Dealt) and r.message.forced for r in records)
        self.watches.forced.forget(key)
        self.judged.put(key, True)

    def partial(self) -> dict[str, Any]:
        """Judge what is left and sum up: the counts, what was found, the money's books."""
        for key in list(self.pending):
            self._judge(key, self.pending.pop(key))
        found = self.found + self.watches.finish()
        tables = self.watches.tables.versions_found
        shared = set(tables)
        return {
            "records": self.records,
            "rounds": self.rounds,
            "ended": self.ended,
            "forced": self.forced,
            "violations": [v for v in found if v not in shared],
            "tables": tables,
            "books": [[*book, *sums.values()] for book, sums in self.watches.money.books().items()],
            "peak_rounds": self.peak,
        }

    def report(self) -> AuditReport:
        return AuditFold.merge([self.partial()])

    @staticmethod
    def merge(partials: Sequence[Mapping[str, Any]]) -> AuditReport:
        """One verdict from the partials of disjoint shares: the counts and findings added up,
        the tables' findings once (every share reads the whole tables topic), and money's
        conservation over the books of every share."""
        books: dict[Book, dict[str, int]] = {}
        found: list[str] = []
        for partial in partials:
            found += partial["violations"]
            add_books(books, {(c, m): _sums(rest) for c, m, *rest in partial["books"]})
        tables = list(dict.fromkeys(v for p in partials for v in p["tables"]))
        found += tables + conservation_violations(books)
        return AuditReport(
            records=sum(p["records"] for p in partials),
            rounds=sum(p["rounds"] for p in partials),
            ended=sum(p["ended"] for p in partials),
            violations=found,
            forced=sum(p["forced"] for p in partials),
        )


def _sums(values: Iterable[int]) -> dict[str, int]:
    return dict(zip(("players", "house", "promotion", "outside"), values, strict=True))


def _key_of(record: Record) -> RoundKey | None:
    """The round a record belongs to: its message's, or for an operator-visible record that
    does not parse (or names it only in what it rejected), the one its JSON names."""
    m = record.message
    if isinstance(m, Message) and m.round_id is not None and record.role != "rejected":
        return (m.player_id, m.round_id)
    if record.role in OPERATOR_VISIBLE:
        return round_key_of(json_of(record.raw))
    return None


def in_record_time(records: Iterable[Record]) -> list[Record]:
    """The records as the reader hands them over: each partition in offset order, the
    partitions interleaved by record time."""
    partitions: dict[tuple[str, int], list[Record]] = {}
    for record in records:
        partitions.setdefault((record.role, record.partition), []).append(record)
    ordered = [sorted(p, key=lambda r: r.offset) for _, p in sorted(partitions.items())]
    return list(heapq.merge(*ordered, key=lambda r: r.timestamp))


def fold(records: Iterable[Record], **options: Any) -> AuditReport:
    """The streaming audit of records already in memory (``options``: ``AuditFold``'s)."""
    audit = AuditFold(**options)
    for record in in_record_time(records):
        audit.feed(record)
    return audit.report()
