"""The ownership check of a run, from its committed records: no input decided twice, no round
decided by two owners, nothing decided against a partial state.

Every event a service publishes takes its ``event_id`` from where its input record was (topic,
partition, offset: ``Context.seed``), so an input decided twice, whether by two instances that
both believed they owned its partition or by one instance after a restart that lost its
offsets, commits the same ``event_id`` twice. Two owners deciding two different inputs for one
round commit two decisions of one kind for it (two Dealt, two Settled, two stakes). A state
that was reset or half rebuilt shows as a refusal the log contradicts: a bet refused for
``insufficient_funds`` while the ledger before it held the money, a Call or Fold refused as
``unknown_round`` after the round's Dealt. No header or field is needed for any of it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from holdem.core import contracts as c
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.rules import STANDARD
from holdem.harness.audit_log import Record

# One of each per round, whoever decides it (a refused Settled is followed by no second one
# in a clean run either: the chaos load never forges one).
ONCE_PER_ROUND: tuple[type[c.Message], ...] = (
    c.BetPlaced,
    c.DeckSealed,
    c.Dealt,
    c.Settled,
    c.StakeTaken,
    c.PayoutCredited,
    c.RoundClosed,  # ADR 028
)
OUTPUT_ROLES = ("rounds", "wallet", "vault", "rejected")


@dataclass(frozen=True)
class OwnershipReport:
    decided: int  # service events checked
    violations: list[str]

    @property
    def ok(self) -> bool:
        return not self.violations


def check_ownership(records: Iterable[Record]) -> OwnershipReport:
    records = [r for r in records if r.message is not None]
    outputs = [r for r in records if r.role in OUTPUT_ROLES]
    found = [
        *_decided_twice(outputs),
        *_two_owners(outputs),
        *_funds_refused_while_held(records),
        *_round_unknown_after_dealt(outputs),
    ]
    return OwnershipReport(len(outputs), found)


def _where(record: Record) -> str:
    return f"{record.role}/{record.partition}/{record.offset}"


def _decided_twice(records: list[Record]) -> Iterator[str]:
    """An event id committed twice: one input (the id's seed) decided twice."""
    seen: dict[tuple[str, str], Record] = {}
    for record in records:
        key = (record.message.type, record.message.event_id)
        if key in seen:
            yield (
                f"input decided twice: {key[0]} {key[1]} at {_where(seen[key])} "
                f"and {_where(record)}"
            )
        else:
            seen[key] = record


def _two_owners(records: list[Record]) -> Iterator[str]:
    """Two different decisions of one kind for one round (distinct ids: distinct inputs)."""
    ids: dict[tuple[str, str | None, str], set[str]] = defaultdict(set)
    for record in records:
        m = record.message
        if isinstance(m, ONCE_PER_ROUND):
            ids[(m.player_id, m.round_id, record.message.type)].add(m.event_id)
    decisions: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    for record in records:
        m = record.message
        if isinstance(m, c.Called | c.Folded):
            decisions[(m.player_id, m.round_id)].add(m.event_id)
    for (player, round_id, kind), found in sorted(ids.items()):
        if len(found) > 1:
            yield f"round {player}/{round_id}: {len(found)} different {kind} decided"
    for (player, round_id), found in sorted(decisions.items()):
        if len(found) > 1:
            yield f"round {player}/{round_id}: {len(found)} different Called/Folded decided"


def _funds_refused_while_held(records: list[Record]) -> Iterator[str]:
    """A bet refused for insufficient funds while the player's balance, as the wallet's last
    movement before that refusal reported it, covered the bet (ante, AA Bonus, the call)."""
    cost = {
        r.message.command_id: r.message.ante * (1 + STANDARD.call_multiple) + r.message.aa_bonus
        for r in records
        if isinstance(r.message, c.PlaceBet)
    }
    by_partition: dict[int, list[Record]] = defaultdict(list)
    for record in records:
        m = record.message
        refused = isinstance(m, c.BetRejected) and m.reason == c.Reason.INSUFFICIENT_FUNDS
        if refused or isinstance(m, WalletEvent):
            by_partition[record.partition].append(record)
    for partition_records in by_partition.values():
        available: dict[str, int] = {}
        # The wallet commits a refusal and its movements in the order it decides them; a tie
        # in time puts the refusal first, so a movement after it never counts for it.
        for record in sorted(partition_records, key=lambda r: (r.timestamp, r.role == "wallet")):
            m = record.message
            if isinstance(m, WalletEvent):
                available[m.player_id] = m.available
                continue
            needed, held = cost.get(m.command_id), available.get(m.player_id, 0)
            if needed is not None and held >= needed:
                yield (
                    f"bet {m.player_id}/{m.round_id} refused insufficient_funds at "
                    f"{_where(record)} while the ledger held {held} (needed {needed})"
                )


def _round_unknown_after_dealt(records: list[Record]) -> Iterator[str]:
    """A Call or Fold refused as ``unknown_round`` after the round was dealt on that partition:
    the dealer decided it against a state that did not have the round."""
    dealt: set[tuple[int, str, str]] = set()
    for record in sorted(records, key=lambda r: (r.role, r.partition, r.offset)):
        m = record.message
        if record.role != "rounds":
            continue
        if isinstance(m, c.Dealt):
            dealt.add((record.partition, m.player_id, m.round_id))
        elif (
            isinstance(m, c.CommandRejected)
            and m.reason == c.Reason.UNKNOWN_ROUND
            and (record.partition, m.player_id, m.round_id) in dealt
        ):
            yield (
                f"{m.command_type} of {m.player_id}/{m.round_id} refused unknown_round at "
                f"{_where(record)} after its Dealt"
            )
