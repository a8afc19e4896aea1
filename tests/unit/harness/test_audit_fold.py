"""The streaming audit (issue 31, ADR 040): a realistic history folded with bounded state gives
the whole audit's verdict and counts; a done round leaves memory; shares of the partitions merge
into one verdict; a forged or late record is found."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from holdem.core.contracts import Message, dump
from holdem.core.wire.partitioning import partition_for_key
from holdem.harness.audit import check
from holdem.harness.audit_fold import AuditFold, fold, in_record_time
from holdem.harness.audit_log import Record
from holdem.harness.audit_stream import ShareListener, check_shares

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_replay import generate

PARTITIONS = 3
STEP_MS = 20  # record time between two records: 600 rounds span about 80 s


def history(rounds: int, players: int = 12) -> list[Record]:
    """``rounds`` rounds as the services would have written them, on three partitions."""
    offsets: Counter[tuple[str, int]] = Counter()
    records = []
    for n, (role, event) in enumerate(generate(rounds, players)):
        records.append(record(role, event, offsets, 1_000_000 + n * STEP_MS))
    return records


def record(role: str, event: Message, offsets: Counter[tuple[str, int]], stamp: int) -> Record:
    partition = partition_for_key(event.player_id.encode(), PARTITIONS)
    offset = offsets[(role, partition)]
    offsets[(role, partition)] += 1
    return Record.of(role, partition, offset, dump(event), stamp)


def shares(records: list[Record], *owned: set[int]) -> list[AuditFold]:
    folds = []
    for partitions in owned:
        audit = AuditFold()
        for r in in_record_time(r for r in records if r.partition in partitions):
            audit.feed(r)
        folds.append(audit)
    return folds


def test_a_history_folded_gives_the_whole_audits_verdict_holding_few_rounds() -> None:
    records = history(600)
    whole, audit = check(records), AuditFold()
    for r in in_record_time(records):
        audit.feed(r)
    streamed = audit.report()
    assert whole.ok and streamed.ok, (whole.violations, streamed.violations)
    assert (streamed.records, streamed.rounds, streamed.ended) == (len(records), 600, 600)
    # Rounds leave once done and 5 s of record time past: a few seconds' worth are held.
    assert audit.peak < 600 // 4, audit.peak


def test_two_shares_merge_into_the_verdict_of_one() -> None:
    records = history(300)
    one = fold(records)
    two = AuditFold.merge([f.partial() for f in shares(records, {0}, {1, 2})])
    assert (two.records, two.rounds, two.ended, two.ok) == (
        one.records,
        one.rounds,
        one.ended,
        True,
    )


def test_a_forged_payout_is_found_by_the_share_that_holds_it_and_money_is_not_conserved() -> None:
    records = history(120)
    at = next(i for i, r in enumerate(records) if r.message.type == "wallet.payout_credited")
    forged = records[at].message.model_copy(update={"amount": records[at].message.amount + 1})
    records[at] = Record.of("wallet", records[at].partition, records[at].offset, dump(forged),
                            records[at].timestamp)  # fmt: skip
    whole = check(records)
    merged = AuditFold.merge([f.partial() for f in shares(records, {0}, {1}, {2})])
    assert not whole.ok and sorted(merged.violations) == sorted(whole.violations)


def test_a_record_of_a_round_after_it_was_judged_is_reported() -> None:
    records = history(200)
    first = next(r for r in records if r.message.type == "round.settled")
    again = Record.of("rounds", first.partition, 10**6, first.raw, records[-1].timestamp + 1)
    found = fold([*records, again]).violations
    name = f"{first.message.player_id}/{first.message.round_id}"
    late = f"{name}: round.settled at rounds[{first.partition}]@1000000 after the round was done"
    assert late in found and len(found) == 2, found  # and its event id, seen twice


def test_beyond_its_cap_of_open_rounds_the_oldest_is_judged_as_it_stands() -> None:
    records = [r for r in history(40) if r.message.type != "round.settled"]
    report = fold(records, open_rounds=10, require_ended=False)
    assert report.rounds == 40 and report.ended == 0
    assert sum("never ended" in v for v in fold(records, open_rounds=10).violations) == 40


def test_merge_refuses_shares_that_overlap_or_leave_a_partition_out() -> None:
    def partial(*rounds: int) -> dict[str, object]:
        share = {"rounds": list(rounds), "wallet": list(rounds), "tables": [0, 1, 2]}
        return {"partitions": {"rounds": 3, "wallet": 3, "tables": 3}, "share": share}

    check_shares([partial(0), partial(1, 2)])  # disjoint and whole: merged
    with pytest.raises(ValueError, match=r"partitions \[1\] read by more than one share"):
        check_shares([partial(0, 1), partial(1, 2)])
    with pytest.raises(ValueError, match=r"partitions \[2\] read by no share"):
        check_shares([partial(0), partial(1)])


async def test_a_worker_whose_share_changes_once_reading_knows_it_lost_its_share() -> None:
    share = ShareListener()
    await share.on_partitions_assigned({"t": 0})
    await share.on_partitions_revoked({"t": 0})  # settling: the group still forms
    assert not share.lost
    share.reading = True
    await share.on_partitions_revoked({"t": 0})
    assert share.lost
