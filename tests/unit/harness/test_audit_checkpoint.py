"""Incremental audits (issue 31 item 3, ADR 041): periods chained by a checkpoint give exactly
the whole audit's findings and counts; what is open at a cut is judged once; a killed run
resumes reading only the rest; a checkpoint that cannot continue the audit is refused."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_audit_fold import history

from holdem.core.contracts import dump
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness import audit_checkpoint, audit_cli
from holdem.harness.audit_checkpoint import (
    NAME,
    CheckpointError,
    MemorySource,
    Period,
    load,
    run_period,
)
from holdem.harness.audit_fold import AuditFold, in_record_time
from holdem.harness.audit_log import Record

OPTIONS = {"require_ended": True, "operator": None}


def whole(records: list[Record]) -> Period:
    audit = AuditFold()
    for r in in_record_time(records):
        audit.feed(r)
    report = audit.report()
    return Period(report.violations, report, len(records), False)


async def periods(records: list[Record], directory: Path, *cuts: int) -> list[Period]:
    """One period per cut, then the last one with ``--final``."""
    source = MemorySource(records)
    done = [await run_period(source, directory, OPTIONS, until=cut) for cut in cuts]
    return [*done, await run_period(source, directory, OPTIONS, final=True)]


def forge_payout(records: list[Record], after: int) -> tuple[list[Record], str]:
    """A payout credited one chip more than its round paid, at or after record time ``after``."""
    at = next(
        i
        for i, r in enumerate(records)
        if r.message.type == "wallet.payout_credited" and r.timestamp >= after
    )
    r = records[at]
    forged = r.message.model_copy(update={"amount": r.message.amount + 1})
    records = list(records)
    records[at] = Record.of("wallet", r.partition, r.offset, dump(forged), r.timestamp)
    return records, r.message.player_id


def stamps(records: list[Record]) -> list[int]:
    return sorted(r.timestamp for r in records)


async def test_two_periods_give_exactly_the_whole_audits_findings_and_counts(
    tmp_path: Path,
) -> None:
    records, _ = forge_payout(history(300), 0)
    one = whole(records)
    first, second = await periods(records, tmp_path, stamps(records)[len(records) // 2])
    assert first.read + second.read == len(records)
    assert 0 < first.read < len(records)
    assert Counter(first.new + second.new) == Counter(one.new) and one.new
    r, w = second.report, one.report
    assert (r.records, r.rounds, r.ended, r.forced) == (w.records, w.rounds, w.ended, w.forced)


async def test_three_periods_of_a_sound_log_find_nothing_and_count_every_round(
    tmp_path: Path,
) -> None:
    records = history(300)
    at = stamps(records)
    done = await periods(records, tmp_path, at[len(at) // 3], at[2 * len(at) // 3])
    assert [p.new for p in done] == [[], [], []]
    assert (done[-1].report.rounds, done[-1].report.ended) == (300, 300)
    assert sum(p.read for p in done) == len(records)


async def test_a_round_open_across_the_cut_is_judged_once(tmp_path: Path) -> None:
    records = history(120)
    # Cut between a round's deal and its settlement: the round is open at the cut.
    settled = next(r for r in records[len(records) // 2 :] if r.message.type == "round.settled")
    key = (settled.message.player_id, settled.message.round_id)
    source = MemorySource(records)
    first = await run_period(source, tmp_path, OPTIONS, until=settled.timestamp)
    held = load(tmp_path, {**OPTIONS, "since": None})
    assert held is not None and held.fold is not None and key in held.fold.pending
    assert first.new == [] and first.report.rounds < 120
    second = await run_period(source, tmp_path, OPTIONS, final=True)
    assert second.new == [] and (second.report.rounds, second.report.ended) == (120, 120)


async def test_a_forgery_in_the_second_period_is_found_then(tmp_path: Path) -> None:
    records = history(300)
    cut = stamps(records)[len(records) // 2]
    forged, player = forge_payout(records, cut + 10_000)
    first, second = await periods(forged, tmp_path, cut)
    assert first.new == []
    assert any(player in v for v in second.new), second.new
    assert Counter(second.new) == Counter(whole(forged).new)


async def test_a_killed_run_resumes_reading_only_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records, _ = forge_payout(history(300), 0)
    one = whole(records)
    killed_after = 1_700

    real_feed = AuditFold.feed

    def dies(self: AuditFold, record: Record) -> None:
        if self.records >= killed_after:
            raise KeyboardInterrupt  # the process killed mid-period
        real_feed(self, record)

    monkeypatch.setattr(AuditFold, "feed", dies)
    with pytest.raises(KeyboardInterrupt):
        await run_period(MemorySource(records), tmp_path, OPTIONS, final=True, every=500)
    monkeypatch.setattr(AuditFold, "feed", real_feed)
    resumed = await run_period(MemorySource(records), tmp_path, OPTIONS, final=True, every=500)
    assert resumed.resumed
    # The last checkpoint before the kill was at 1,500 records: only the rest is read again
    # (each partition from the record after the last one folded before that checkpoint).
    assert resumed.read == len(records) - 1_500
    assert Counter(resumed.new) == Counter(one.new) and one.new
    assert resumed.report.rounds == one.report.rounds


async def test_no_checkpoint_is_a_full_audit_and_since_until_alone_audits_a_period(
    tmp_path: Path,
) -> None:
    records = history(60)
    alone = await run_period(MemorySource(records), None, OPTIONS)
    assert alone.read == len(records) and alone.new == [] and alone.report.rounds == 60
    at = stamps(records)
    part = await run_period(MemorySource(records), None, OPTIONS, since=at[0], until=at[-1])
    assert part.read == len(records) - 1  # the last record is stamped at --until: not in it


async def refused(
    directory: Path, records: list[Record], **kwargs: object
) -> str:  # the one line the CLI prints
    with pytest.raises(CheckpointError) as error:
        await run_period(MemorySource(records), directory, OPTIONS, **kwargs)  # type: ignore[arg-type]
    return str(error.value)


async def test_a_corrupt_checkpoint_is_refused(tmp_path: Path) -> None:
    records = history(40)
    await run_period(MemorySource(records), tmp_path, OPTIONS, until=stamps(records)[100])
    data = bytearray((tmp_path / NAME).read_bytes())
    data[-10] ^= 1
    (tmp_path / NAME).write_bytes(bytes(data))
    assert "corrupt" in await refused(tmp_path, records)


async def test_a_checkpoint_of_another_code_or_other_options_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = history(40)
    await run_period(MemorySource(records), tmp_path, OPTIONS, until=stamps(records)[100])
    with pytest.raises(CheckpointError, match="other options"):
        await run_period(MemorySource(records), tmp_path, {**OPTIONS, "require_ended": False})
    with pytest.raises(CheckpointError, match="other options"):
        await run_period(MemorySource(records), tmp_path, OPTIONS, since=5)
    monkeypatch.setattr(audit_checkpoint, "fingerprint", lambda: "0" * 64)
    assert "another version" in await refused(tmp_path, records)


async def test_records_deleted_before_they_were_audited_are_refused(tmp_path: Path) -> None:
    records = history(40)
    await run_period(MemorySource(records), tmp_path, OPTIONS, until=stamps(records)[100])
    held = load(tmp_path, {**OPTIONS, "since": None})
    assert held is not None
    part, offset = min(held.offsets.items())
    gone = MemorySource(records, gone={part: offset + 1})
    with pytest.raises(CheckpointError, match="deleted before they were audited"):
        await run_period(gone, tmp_path, OPTIONS)


async def test_a_cut_past_until_is_refused(tmp_path: Path) -> None:
    records = history(40)
    at = stamps(records)
    await run_period(MemorySource(records), tmp_path, OPTIONS, until=at[300])
    assert "before the checkpoint's cut" in await refused(tmp_path, records, until=at[100])


async def test_a_closed_chain_is_refused(tmp_path: Path) -> None:
    records = history(20)
    await run_period(MemorySource(records), tmp_path, OPTIONS, final=True)
    assert "closed by --final" in await refused(tmp_path, records)


class _Boom:
    """Unpickled, it runs a shell command (``os.system``)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (self.command,))


async def test_a_checkpoint_that_would_call_os_system_is_refused(tmp_path: Path) -> None:
    records = history(20)
    await run_period(MemorySource(records), tmp_path, OPTIONS, until=stamps(records)[50])
    held = load(tmp_path, {**OPTIONS, "since": None})
    assert held is not None and held.fold is not None
    marker = tmp_path / "pwned"
    held.fold.found.append(_Boom(f"touch {marker}"))  # type: ignore[arg-type]
    audit_checkpoint.save(tmp_path, held)  # a valid SHA-256: only the unpickler stands
    message = await refused(tmp_path, records)
    assert "system: refused" in message and not marker.exists()
    # The same bytes through a plain unpickler do run it: the refusal is what stopped it.
    state = (tmp_path / NAME).read_bytes().split(b"\n", 3)[3]
    pickle.loads(state)
    assert marker.exists()


def test_a_time_is_milliseconds_or_iso_8601_with_its_offset() -> None:
    parse = audit_checkpoint.parse_time
    assert parse("1700000000000") == 1_700_000_000_000
    assert parse("2026-12-05T18:00:00Z") == parse("2026-12-05T19:00:00+01:00") == 1_796_493_600_000
    with pytest.raises(ValueError, match="offset"):
        parse("2026-12-05T18:00:00")
    with pytest.raises(ValueError, match="not a time"):
        parse("yesterday")


# Every way a file can fail to be a checkpoint of this audit reaches the CLI as a typed refusal:
# one line on stderr naming the file and why, exit 2, the file as it was.

CLI_TOPICS = Topics().with_prefix("x")
CLI_OPTIONS = {  # what ``holdem audit --checkpoint DIR --prefix x`` continues
    "require_ended": False,
    "operator": operator_of_prefix(CLI_TOPICS.prefix),
    "prefix": CLI_TOPICS.prefix,
    "roles": None,
    "since": None,
}


def good_header() -> dict[str, Any]:
    return {
        "format": 1,
        "code": audit_checkpoint.fingerprint(),
        "options": CLI_OPTIONS,
        "offsets": {"rounds/0": 5, "wallet/1": 0},
        "until": 1_700_000_000_000,
        "printed": ["a finding"],
        "final": False,
    }


def good_fold() -> bytes:
    fold = AuditFold(require_ended=False, operator=CLI_OPTIONS["operator"])
    return pickle.dumps(fold, protocol=pickle.HIGHEST_PROTOCOL)


def forge(directory: Path, header: object, state: bytes = b"", *, line: bytes = b"") -> None:
    """A checkpoint whose SHA-256 matches, so that only the checks past the digest stand:
    ``header`` as the header line's JSON (``line``: the line's bytes as they are)."""
    body = (line or json.dumps(header).encode()) + b"\n" + state
    digest = hashlib.sha256(body).hexdigest().encode()
    (directory / NAME).write_bytes(audit_checkpoint.MAGIC + b" 1\n" + digest + b"\n" + body)


def cli_refuses(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``holdem audit --checkpoint DIR``: exit 2 before any broker is asked, one line on stderr
    naming the file, nothing on stdout, the file's bytes as they were; the line's reason."""
    before = (directory / NAME).read_bytes()
    code = audit_cli.main(["--checkpoint", str(directory), "--prefix", "x"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    [line] = err.splitlines()
    named = f"holdem audit: checkpoint {directory / NAME} refused: "
    assert line.startswith(named), line
    assert (directory / NAME).read_bytes() == before
    return line[len(named) :]


def test_the_forged_checkpoints_below_differ_from_a_good_one_only_where_they_say(
    tmp_path: Path,
) -> None:
    forge(tmp_path, good_header(), good_fold())
    held = load(tmp_path, CLI_OPTIONS)
    assert held is not None and isinstance(held.fold, AuditFold)
    assert held.offsets == {("rounds", 0): 5, ("wallet", 1): 0}
    assert (held.until, held.printed, held.final) == (1_700_000_000_000, ["a finding"], False)


def changed(**fields: object) -> dict[str, Any]:
    return {**good_header(), **fields}


def without(name: str) -> dict[str, Any]:
    return {k: v for k, v in good_header().items() if k != name}


@pytest.mark.parametrize(
    ("header", "why"),
    [
        (b"{not json", "its header is not JSON"),
        (b"\xff\xfe{}", "its header is not JSON"),
        (b"", "its header is not JSON"),
        (b"[" * 100_000, "its header is not JSON"),  # nested past any parser's depth
        ([], "its header is not a checkpoint's"),
        ("a string", "its header is not a checkpoint's"),
        (None, "its header is not a checkpoint's"),
        ({}, "its header is not a checkpoint's"),
        (without("code"), "code: Field required"),
        (without("offsets"), "offsets: Field required"),
        (without("final"), "final: Field required"),
        (changed(format=2), "format: Input should be 1"),  # a header of another version
        (changed(format="1"), "format: Input should be 1"),
        (changed(offsets=[["rounds", 0, 5]]), "offsets"),
        (changed(offsets={"rounds/0": "5"}), "offsets.rounds/0"),
        (changed(offsets={"rounds/0": 5.0}), "offsets.rounds/0"),
        (changed(offsets={"rounds/0": True}), "offsets.rounds/0"),
        (changed(offsets={"rounds/0": -1}), "offsets.rounds/0"),
        (changed(offsets={"rounds": 5}), "'rounds', not a role/partition"),
        (changed(offsets={"rounds/x": 5}), "'rounds/x', not a role/partition"),
        (changed(offsets={"/3": 5}), "'/3', not a role/partition"),
        (changed(until="later"), "until"),
        (changed(until=1.5), "until"),
        (changed(printed="a finding"), "printed"),
        (changed(printed=[1]), "printed.0"),
        (changed(final="no"), "final"),
        (changed(final=0), "final"),
        (changed(options=["x"]), "options"),
        (changed(code=7), "code"),
    ],
)
def test_a_valid_digest_over_a_header_that_is_not_one_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: object, why: str
) -> None:
    if isinstance(header, bytes):
        forge(tmp_path, None, good_fold(), line=header or b" ")
    else:
        forge(tmp_path, header, good_fold())
    assert why in cli_refuses(tmp_path, capsys)


@pytest.mark.parametrize(
    ("state", "final", "why"),
    [
        (b"not a pickle", False, "its fold cannot be loaded"),
        (good_fold()[:-20], False, "its fold cannot be loaded"),  # torn inside the pickle
        (pickle.dumps({"a": 1}), False, "does not hold an audit's fold but a dict"),
        (pickle.dumps(Record.of("rounds", 0, 0, b"{}")), False, "not hold an audit's fold"),
        (b"", False, "final=False but it holds no fold"),
        (good_fold(), True, "final=True but it holds a fold"),
    ],
)
def test_a_valid_header_over_a_fold_that_is_not_one_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], state: bytes, final: bool, why: str
) -> None:
    forge(tmp_path, changed(final=final), state)
    assert why in cli_refuses(tmp_path, capsys)


def test_a_pickle_naming_a_holdem_class_that_is_not_there_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pickle.dumps of holdem.harness.audit.Nowhere, a class that module does not define
    missing = b"\x80\x04\x8c\x14holdem.harness.audit\x94\x8c\x07Nowhere\x94\x93\x94."
    forge(tmp_path, good_header(), missing)
    assert "its fold cannot be loaded: AttributeError" in cli_refuses(tmp_path, capsys)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "not a checkpoint of format 1"),
        (b"HOLDEM-AUDIT-CHECKPOINT 1\n", "SHA-256 does not match"),  # torn after its first line
        (b"HOLDEM-AUDIT-CHECKPOINT 2\n00\n{}\n", "not a checkpoint of format 1"),
        (b"HOLDEM-AUDIT-CHECKPOINT 1\n" + b"0" * 64 + b"\n{}\n", "SHA-256 does not match"),
    ],
)
def test_a_torn_file_another_format_or_a_bad_digest_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, why: str
) -> None:
    (tmp_path / NAME).write_bytes(data)
    assert why in cli_refuses(tmp_path, capsys)


def test_a_checkpoint_of_other_options_or_another_code_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    forge(tmp_path, changed(options={**CLI_OPTIONS, "prefix": "y"}), good_fold())
    assert "other options" in cli_refuses(tmp_path, capsys)
    forge(tmp_path, good_header(), good_fold())
    monkeypatch.setattr(audit_checkpoint, "fingerprint", lambda: "0" * 64)
    assert "another version of the audit's code" in cli_refuses(tmp_path, capsys)


def test_a_forged_fold_that_would_run_code_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "pwned"
    forge(tmp_path, good_header(), pickle.dumps(_Boom(f"touch {marker}")))
    assert "system: refused" in cli_refuses(tmp_path, capsys)
    assert not marker.exists()


def test_an_unreadable_checkpoint_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / NAME).mkdir()
    before = sorted(tmp_path.iterdir())
    assert audit_cli.main(["--checkpoint", str(tmp_path), "--prefix", "x"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"holdem audit: checkpoint {tmp_path / NAME} refused: cannot be read")
    assert sorted(tmp_path.iterdir()) == before


def test_a_closed_chain_is_refused_by_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forge(tmp_path, changed(final=True))
    assert "closed by --final" in cli_refuses(tmp_path, capsys)
