"""The live auditor's checkpoint (ADR 044) without a broker: a fold stopped, saved and resumed
judges exactly as one that never stopped and reports each finding once; it resumes at each
partition's next offset to fold; a checkpoint that is corrupt, forged, of other options or of
another log is refused (moved aside, logged) and the auditor starts from the log's beginning."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import structlog
from aiokafka import TopicPartition
from test_audit_checkpoint import _Boom, forge, forge_payout, stamps
from test_audit_fold import history
from test_auditor_service import Producer

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.harness import audit_checkpoint
from holdem.harness.audit_fold import in_record_time
from holdem.harness.audit_log import Record
from holdem.harness.auditor_service import CHECKPOINT_NAME, Auditor

TOPICS = Topics()
FAR = 10**15  # a wall clock past every record: tick judges every round that is done


def game(rounds: int) -> list[Record]:
    """``rounds`` rounds of history on the topics the auditor reads (not the vault)."""
    return [r for r in history(rounds) if r.role in auditor(None).roles]


def auditor(directory: Path | None, topics: Topics = TOPICS) -> Auditor:
    return Auditor(KafkaConnection("127.0.0.1:1"), topics, checkpoint_dir=directory)


def roles(a: Auditor) -> dict[str, str]:
    return {a.topics.name(role): role for role in a.roles}


def tp(record: Record) -> TopicPartition:
    return TopicPartition(TOPICS.name(record.role), record.partition)


def bounds(records: list[Record]) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
    begins = {tp(r): 0 for r in records}
    ends = dict.fromkeys(begins, 0)
    for r in records:
        ends[tp(r)] = max(ends[tp(r)], r.offset + 1)
    return begins, ends


async def feed(a: Auditor, records: list[Record], producer: Producer) -> None:
    """What the live loop does with released records: fold, note the offset, report."""
    for r in records:
        a.fold.feed(r)
        a.folded[tp(r)] = r.offset + 1
    await a._report(producer)


async def test_stopped_saved_and_resumed_it_judges_as_one_run_and_reports_each_finding_once(
    tmp_path: Path,
) -> None:
    clean = game(60)
    cut = stamps(clean)[len(clean) // 2]
    records, _ = forge_payout(clean, after=0)  # one forgery before the cut ...
    records, _ = forge_payout(records, after=cut + 1)  # ... and one after
    ordered = in_record_time(records)
    first = [r for r in ordered if r.timestamp <= cut]
    begins, ends = bounds(records)

    whole, whole_sent = auditor(None), Producer()
    whole.resume(begins, ends, roles(whole))
    await feed(whole, ordered, whole_sent)
    whole.fold.tick(FAR)
    await whole._report(whole_sent)

    before, sent = auditor(tmp_path), Producer()
    before.folded = before.resume(begins, ends, roles(before))
    assert before.folded == begins  # no checkpoint yet: the beginning
    await feed(before, first, sent)
    await before.save_checkpoint(roles(before))

    after = auditor(tmp_path)
    after.written = {key for _, _, key in sent.sent if key is not None}  # the findings topic
    starts = after.resume(begins, ends, roles(after))
    assert starts == {t: before.folded.get(t, 0) for t in begins}
    assert after.resumed == len(first) == after.fold.records
    rest = [r for r in ordered if r.offset >= starts[tp(r)]]
    assert len(rest) == len(records) - len(first)  # only what came after the checkpoint
    await feed(after, rest, sent)
    after.fold.tick(FAR)
    await after._report(sent)

    assert len(whole_sent.sent) >= 2
    assert sorted(k for *_, k in sent.sent) == sorted(k for *_, k in whole_sent.sent)
    assert after.known == 0  # nothing found again: the fold went on, it did not start over
    assert after.fold.report() == whole.fold.report()


async def test_nothing_is_saved_while_a_finding_is_not_reported(tmp_path: Path) -> None:
    a = auditor(tmp_path)
    a.fold.found.append("p1/r1: ended (round.voided) without a BetPlaced")
    await a.save_checkpoint(roles(a))
    assert not (tmp_path / CHECKPOINT_NAME).exists()
    await a._report(Producer())
    await a.save_checkpoint(roles(a))
    assert (tmp_path / CHECKPOINT_NAME).exists()


async def saved(tmp_path: Path, records: list[Record]) -> None:
    a = auditor(tmp_path)
    await feed(a, in_record_time(records), Producer())
    await a.save_checkpoint(roles(a))


def refused(directory: Path, records: list[Record], topics: Topics = TOPICS, **change: Any) -> str:
    """Resume over ``records``' partitions (``change``: other bounds); the refusal's error,
    with the file moved aside and the log's beginning as the start."""
    a = auditor(directory, topics)
    begins, ends = bounds(records)
    begins |= change.get("begins", {})
    ends |= change.get("ends", {})
    with structlog.testing.capture_logs() as logs:
        starts = a.resume(begins, ends, roles(a))
    assert starts == begins and a.resumed == 0 and a.fold.records == 0
    assert not (directory / CHECKPOINT_NAME).exists()
    assert (directory / f"{CHECKPOINT_NAME}.refused").exists()
    [line] = [line for line in logs if line["event"] == "checkpoint_refused"]
    assert line["log_level"] == "critical"
    assert str(line["error"]).startswith("CheckpointError: ")  # load's typed refusal, as the CLI's
    return str(line["error"])


async def test_a_tampered_checkpoint_is_refused_and_the_log_read_from_its_beginning(
    tmp_path: Path,
) -> None:
    records = game(20)
    await saved(tmp_path, records)
    path = tmp_path / CHECKPOINT_NAME
    data = bytearray(path.read_bytes())
    data[-10] ^= 1
    path.write_bytes(bytes(data))
    assert "SHA-256 does not match" in refused(tmp_path, records)


async def test_a_forged_checkpoint_that_would_run_code_is_refused(tmp_path: Path) -> None:
    records = game(20)
    await saved(tmp_path, records)
    held = audit_checkpoint.load(tmp_path, auditor(None).options, CHECKPOINT_NAME)
    assert held is not None and held.fold is not None
    marker = tmp_path / "pwned"
    held.fold.found.append(_Boom(f"touch {marker}"))
    audit_checkpoint.save(tmp_path, held, CHECKPOINT_NAME)  # a valid digest
    assert "system: refused" in refused(tmp_path, records)
    assert not marker.exists()


async def test_another_deployments_or_another_logs_checkpoint_is_refused(tmp_path: Path) -> None:
    records = game(20)
    await saved(tmp_path, records)
    assert "other options" in refused(tmp_path, records, Topics().with_prefix("u"))
    await saved(tmp_path, records)
    part = tp(records[0])
    assert "past the log's end" in refused(tmp_path, records, ends={part: 1})
    await saved(tmp_path, records)
    assert "deleted before they were folded" in refused(tmp_path, records, begins={part: 10**6})


async def test_a_holdem_audit_chain_is_not_the_auditors(tmp_path: Path) -> None:
    records = game(20)
    source = audit_checkpoint.MemorySource(records)
    options = {"require_ended": True, "operator": None}
    await audit_checkpoint.run_period(source, tmp_path, options, until=stamps(records)[50])
    os.replace(tmp_path / audit_checkpoint.NAME, tmp_path / CHECKPOINT_NAME)
    assert "other options" in refused(tmp_path, records)


@pytest.mark.parametrize("text", [b"", b"HOLDEM-AUDIT-CHECKPOINT 1\n"])
def test_an_empty_or_torn_file_is_refused(tmp_path: Path, text: bytes) -> None:
    (tmp_path / CHECKPOINT_NAME).write_bytes(text)
    refused(tmp_path, game(5))


def test_no_directory_or_no_file_is_the_beginning(tmp_path: Path) -> None:
    records = game(5)
    begins, ends = bounds(records)
    for directory in (None, tmp_path):
        a = auditor(directory)
        assert a.resume(begins, ends, roles(a)) == begins and a.resumed == 0


@pytest.mark.parametrize(
    ("line", "state", "why"),
    [
        (b"{not json", b"", "its header is not JSON"),
        (b"[]", b"", "its header is not a checkpoint's"),
        (b'{"format": 1}', b"", "code: Field required"),
        (None, b"not a pickle", "its fold cannot be loaded"),
        (None, b"", "final=False but it holds no fold"),
    ],
)
def test_a_valid_digest_over_a_header_or_fold_that_is_not_one_is_refused(
    tmp_path: Path, line: bytes | None, state: bytes, why: str
) -> None:
    options = dict(auditor(None).options)
    header = {"format": 1, "code": audit_checkpoint.fingerprint(), "options": options,
              "offsets": {}, "until": None, "printed": [], "final": False}  # fmt: skip
    if line is None:
        forge(tmp_path, header, state)
    else:
        forge(tmp_path, None, state, line=line)
    (tmp_path / CHECKPOINT_NAME).unlink(missing_ok=True)
    os.replace(tmp_path / audit_checkpoint.NAME, tmp_path / CHECKPOINT_NAME)
    assert why in refused(tmp_path, game(5))
