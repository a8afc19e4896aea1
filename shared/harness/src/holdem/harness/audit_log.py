"""A run's records as the audits read them: each record with its model, and each round's log
(its bets, deal, decisions, ends and sealed deck). The audits of money, seamless, sessions and
the others take these; ``holdem.harness.audit`` reads the run and runs them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    Called,
    ContractError,
    Dealt,
    DeckSealed,
    Folded,
    Malfunction,
    RoundVoided,
    Settled,
    parse,
)

RoundKey = tuple[str, str]  # (player_id, round_id)


@dataclass(frozen=True)
class Record:
    """One record of a run: where it was in its topic, its bytes, and its model if it parses."""

    role: str
    partition: int
    offset: int
    raw: bytes
    timestamp: int = 0  # Kafka's record timestamp, ms: orders records across topics
    message: Any = None
    headers: tuple[tuple[str, bytes], ...] = ()

    @classmethod
    def of(
        cls,
        role: str,
        partition: int,
        offset: int,
        raw: bytes,
        timestamp: int = 0,
        headers: Iterable[tuple[str, bytes]] = (),
    ) -> Record:
        try:
            message = parse(role, raw)  # an older version validated once, as what it is
        except ContractError:
            message = None
        # The dataclass's own (frozen) __init__ sets each field through object.__setattr__:
        # one record per record read, so its fields go in at once (the same instance).
        record = object.__new__(cls)
        record.__dict__.update(
            role=role, partition=partition, offset=offset, raw=raw, timestamp=timestamp,
            message=message, headers=tuple(headers),
        )  # fmt: skip
        return record


@dataclass
class RoundLog:
    """Everything the log says about one round, each list in partition order."""

    bets: list[BetPlaced] = field(default_factory=list)
    dealt: list[Dealt] = field(default_factory=list)
    decisions: list[tuple[Record, Called | Folded]] = field(default_factory=list)
    ends: list[Settled | RoundVoided] = field(default_factory=list)
    sealed: list[DeckSealed] = field(default_factory=list)
    refused: list[Settled] = field(default_factory=list)  # the wallet refused to pay them


# Which part of a round's log a message's type goes to, worked out once per type (an
# ``isinstance`` that misses a pydantic model costs a few hundred ns).
_PARTS: dict[type, str] = {}


def part_of(cls: type) -> str:
    """The ``RoundLog`` list a message of type ``cls`` goes to ("malfunction": a refusal's
    candidate; "": none); ``isinstance`` of its messages depends on the type alone."""
    for part, classes in (
        ("bets", (BetPlaced,)),
        ("dealt", (Dealt,)),
        ("decisions", (Called, Folded)),
        ("ends", (Settled, RoundVoided)),
        ("sealed", (DeckSealed,)),
        ("malfunction", (Malfunction,)),
    ):
        if issubclass(cls, classes):
            return part
    return ""


LOG_ORDER = attrgetter("role", "partition", "offset")  # a record's place in the log


def in_log_order(records: Iterable[Record]) -> list[Record]:
    """The records sorted by topic, partition and offset: the order every check reads them in."""
    return sorted(records, key=LOG_ORDER)


def rounds_of(records: Iterable[Record], *, ordered: bool = False) -> dict[RoundKey, RoundLog]:
    """Each round's log; ``ordered``: ``records`` are already ``in_log_order``."""
    logs: dict[RoundKey, RoundLog] = defaultdict(RoundLog)
    refusals: dict[RoundKey, set[str | None]] = defaultdict(set)
    for record in records if ordered else in_log_order(records):
        m = record.message
        # A session's end and refusals name no round (ADR 020): they are no round's record.
        if record.role not in ("rounds", "vault") or m is None or m.round_id is None:
            continue
        log = logs[(m.player_id, m.round_id)]
        cls = type(m)
        part = _PARTS.get(cls)
        if part is None:
            part = _PARTS[cls] = part_of(cls)
        if part == "bets":
            log.bets.append(m)
        elif part == "dealt":
            log.dealt.append(m)
        elif part == "decisions":
            log.decisions.append((record, m))
        elif part == "ends":
            log.ends.append(m)
        elif part == "sealed":
            log.sealed.append(m)
        elif part == "malfunction" and m.refuses_settled():
            refusals[(m.player_id, m.round_id)].add(m.causation_id)
    # A Settled the wallet refused (ADR 008) ended nothing: it is an attempt, paid nothing.
    for key, refused in refusals.items():
        log = logs[key]
        log.refused = [e for e in log.ends if isinstance(e, Settled) and e.event_id in refused]
        log.ends = [e for e in log.ends if e not in log.refused]
    return dict(logs)
