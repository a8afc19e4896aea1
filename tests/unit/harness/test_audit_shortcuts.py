"""The audit's shortcuts (issue 31, speed) each give what the full check gives: the secrecy scan
decodes a record only if a hidden card can be in its bytes (a ``\\u`` escape always can); a
round's records are sorted once; an older ``round.closed`` parses as ``parse`` reads it (its
version first, validated once: the audit's own shortcut for it moved into ``parse``)."""

from __future__ import annotations

import json
import random

import pytest
from test_audit_fold import history

from holdem.core.contracts import ContractError, parse
from holdem.harness import audit, audit_fold
from holdem.harness.audit import _cards_in, could_hold, json_of
from holdem.harness.audit_fold import AuditFold, in_record_time
from holdem.harness.audit_log import Record, in_log_order, rounds_of
from holdem.harness.audit_protection import closed_violations

CARDS = [r + s for r in "23456789TJQKA" for s in "cdhs"]


def full_scan(raw: bytes, hidden: set[str]) -> bool:
    """The secrecy scan without the shortcut: decode, and look at every string."""
    return bool(hidden & set(_cards_in(json_of(raw))))


def test_a_record_whose_bytes_hold_no_hidden_card_has_none_when_decoded() -> None:
    rng = random.Random(31)
    raws = [r.raw for r in history(60)]
    crafted = [
        b'{"x": "\\u0041h"}',  # "Ah", escaped: not in the bytes as text
        b'{"x": "A\\u0068"}',
        b'{"raw": "{\\"card\\": \\"\\\\u0041h\\"}"}',  # escaped inside nested JSON
        b'{"raw": "{\\"card\\": \\"Kd\\"}"}',  # nested JSON keeps the text
        b'{"x": ["Ts", {"y": "9c"}]}',
        b'{"x": "Ah "}',  # text, not a card: the full scan finds nothing either
        json.dumps({"x": "Qh"}, ensure_ascii=True).encode(),
    ]
    checked = 0
    for raw in raws + crafted:
        for _ in range(20):
            hidden = set(rng.sample(CARDS, 7))
            if full_scan(raw, hidden):
                assert could_hold(raw, hidden), raw
            checked += 1
        for card in CARDS:  # every single card
            if full_scan(raw, {card}):
                assert could_hold(raw, {card}), (raw, card)
    assert checked == 20 * (len(raws) + len(crafted))
    # The escaped cards are found by the full scan and kept by the fallback alone.
    assert full_scan(crafted[0], {"Ah"}) and b"Ah" not in crafted[0]
    assert full_scan(crafted[2], {"Ah"}) and b"Ah" not in crafted[2]


def test_the_shortcut_skips_most_records_and_the_audit_finds_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = leaked(history(200))
    skipped = decoded = 0
    real = audit._could_hold  # could_hold with a round's cards encoded once: what the scan calls

    def counting(raw: bytes | str, cards: object) -> bool:
        nonlocal skipped, decoded
        holds = real(raw, cards)  # type: ignore[arg-type]
        skipped += not holds
        decoded += holds
        return holds

    monkeypatch.setattr(audit, "_could_hold", counting)
    fast = fold(records)
    assert skipped > 4 * decoded > 0, (skipped, decoded)  # a deterministic cost counter
    monkeypatch.setattr(audit, "_could_hold", lambda raw, cards: True)
    assert fold(records) == fast
    assert any("visible at" in v for v in fast), fast


def leaked(records: list[Record]) -> list[Record]:
    """A rejection, before its round's decision, that carries a dealer card escaped in JSON."""
    decision = next(r for r in records if r.message.type in ("round.called", "round.folded"))
    hidden = decision.message.dealer_cards[0]
    escaped = "".join(f"\\u{ord(c):04x}" for c in hidden)
    body = (
        f'{{"player_id": "{decision.message.player_id}", '
        f'"round_id": "{decision.message.round_id}", "note": "{escaped}"}}'
    )
    before = decision.timestamp - 1
    return [*records, Record.of("rejected", decision.partition, 10**6, body.encode(), before)]


def fold(records: list[Record]) -> list[str]:
    f = AuditFold(require_ended=False)
    for r in in_record_time(records):
        f.feed(r)
    return f.report().violations


def test_a_rounds_records_are_sorted_once_and_judged_as_if_sorted_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = history(80)
    shuffled = list(records)
    random.Random(5).shuffle(shuffled)
    ordered = in_log_order(shuffled)
    assert rounds_of(ordered, ordered=True) == rounds_of(shuffled)
    assert list(closed_violations(ordered)) == list(closed_violations(records))
    sorts = []
    real = audit_fold.in_log_order
    monkeypatch.setattr(audit_fold, "in_log_order", lambda rs: sorts.append(1) or real(rs))
    f = AuditFold()
    for r in in_record_time(records):
        f.feed(r)
    report = f.report()
    assert report.ok and report.rounds == 80
    assert len(sorts) == 80  # one sort a round judged


def test_an_older_round_closed_parses_in_the_audit_as_parse_reads_it() -> None:
    closed = [r for r in history(40) if b'"round.closed"' in r.raw]
    assert closed and all(b'"version":1' in r.raw.replace(b" ", b"") for r in closed)
    newest = json.loads(closed[0].raw)
    variants = [
        *(r.raw for r in closed),
        json.dumps({**newest, "version": 7}).encode(),  # a version it does not read
        b'{"type": "round.closed", "version": 1',  # malformed
        json.dumps({"type": "round.settled", "note": "round.closed", "version": 1}).encode(),
    ]
    for raw in variants:
        try:
            expected = parse("rounds", raw)
        except ContractError as error:
            expected = str(error)
        assert Record.of("rounds", 0, 0, raw).message == (
            None if isinstance(expected, str) else expected
        ), raw
