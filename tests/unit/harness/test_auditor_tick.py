"""The live auditor's clock (issue 31 item 4): ``AuditFold.tick`` judges, on a quiet log, only
the rounds some service has answered, and leaves the record-time clock alone."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from holdem.core.contracts import PlaceBet, RoundVoided, dump
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_log import Record

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_replay import NOW, generate
from bench_replay import deposit as deposit_of

T0 = 1_000_000_000  # record time of the first record, ms
HOUR_MS = 3_600_000


def place_bet(player: str, round_id: str) -> PlaceBet:
    return PlaceBet(
        event_id=f"{round_id}.cmd",
        command_id=f"{round_id}.cmd",
        player_id=player,
        round_id=round_id,
        occurred_at=NOW,
        currency="EUR",
        ante=10,
    )


def one_round() -> list[Record]:
    """A deposit, a PlaceBet on the commands topic, then one round as the services write it."""
    offsets: Counter[str] = Counter()
    deposit, *events = generate(1, 1)
    player, round_id = events[0][1].player_id, events[0][1].round_id
    records = []
    played = [deposit, ("commands", place_bet(player, round_id)), *events]
    for n, (role, event) in enumerate(played):
        records.append(Record.of(role, 0, offsets[role], dump(event), T0 + n * 10))
        offsets[role] += 1
    return records


def test_a_round_of_commands_only_is_not_judged_on_the_clock_and_its_answers_find_nothing() -> None:
    deposit, command, *answers = one_round()
    fold = AuditFold()
    fold.feed(deposit)
    fold.feed(command)
    # The broker is away for an hour: the wall clock moves, nothing answers the bet.
    fold.tick(T0 + HOUR_MS)
    assert len(fold.pending) == 1, "a round of commands only was judged on the wall clock"
    assert fold.clock == command.timestamp, "tick moved the record-time clock"
    for record in answers:  # the services come back and answer it
        fold.feed(record)
    fold.tick(T0 + 2 * HOUR_MS)
    assert fold.pending == {}
    assert fold.found == [], fold.found
    assert fold.report().ok


def test_an_answered_round_done_is_judged_once_quiet_on_the_wall_clock() -> None:
    voided = RoundVoided(
        event_id="forged.voided",
        player_id="p0",
        round_id="never-bet",
        occurred_at=NOW,
        malfunction_id="m1",
        reason="forged",
    )
    fold = AuditFold(quiet_ms=5_000)
    fold.feed(Record.of("rounds", 0, 0, dump(voided), T0))
    fold.tick(T0 + 4_999)  # not quiet long enough yet
    assert len(fold.pending) == 1 and fold.found == []
    fold.tick(T0 + 5_000)
    assert fold.pending == {}
    assert [f for f in fold.found if "never-bet" in f], fold.found
    assert fold.clock == T0


def test_a_bet_answered_after_a_busy_logs_quiet_time_is_not_judged_before_its_answer() -> None:
    """The soak of 2026-12-06: a wallet more than the quiet time behind the rest of the log
    answered a PlaceBet after the sweep (every 1,024 records, on record time) had judged the
    command alone; every record of that sound round was then reported late."""
    deposit, command, *answers = one_round()
    fold = AuditFold(quiet_ms=5_000)
    fold.feed(deposit)
    fold.feed(command)
    for n in range(1_100):  # the rest of the log moves on: 6.6 s of other players' deposits
        other = dump(deposit_of(f"f{n:04d}", 100))
        fold.feed(Record.of("wallet", 1, n, other, command.timestamp + 10 + 6 * n))
    assert fold.clock > command.timestamp + 5_000 and fold.records > 1_024
    late = command.timestamp + 7_000
    for n, record in enumerate(answers):  # the wallet answers, 7 s after the command
        fold.feed(Record.of(record.role, record.partition, record.offset, record.raw, late + n))
    report = fold.report()
    assert fold.found == [], fold.found[:5]
    assert report.ok and report.rounds == report.ended == 1, report
