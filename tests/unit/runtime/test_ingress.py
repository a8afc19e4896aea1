"""The record checks before a decision, and the brands of open rounds, on their own."""

from __future__ import annotations

import doctest
from datetime import UTC, datetime

import holdem.runtime.brands as brands_module
from holdem.core.contracts import Malfunction, RecordReason
from holdem.core.wire.headers import Stamp
from holdem.core.wire.partitioning import partition_for_key
from holdem.runtime.brands import MAX_BRANDS, Brands
from holdem.runtime.ingress import header_refusal, key_refusal, wanted

AT = datetime(2026, 1, 1, tzinfo=UTC)


def event(kind: str, round_id: str = "r1") -> Malfunction:
    # Brands reads a message's type only: a Malfunction stands in for any round event.
    message = Malfunction(
        event_id="e", player_id="p1", round_id=round_id, occurred_at=AT, source="t", reason="x"
    )
    return message.model_copy(update={"type": kind})


def test_the_brands_doctest_passes() -> None:
    assert doctest.testmod(brands_module).failed == 0


def test_a_rounds_first_brand_stays_until_it_ends() -> None:
    brands = Brands()
    brands.follow(event("round.bet_placed"), "b1")
    brands.follow(event("round.bet_placed"), "b2")
    assert brands.of(event("round.dealt"), None) == "b1"
    brands.follow(event("round.settled"), None)
    assert brands.of(event("round.dealt"), "input") == "input"


def test_brands_keep_the_newest_open_rounds_only() -> None:
    brands = Brands()
    for n in range(MAX_BRANDS + 5):
        brands.follow(event("round.bet_placed", f"r{n}"), "b")
    kept = brands.dump()
    assert len(kept) == MAX_BRANDS and "p1/r0" not in kept and f"p1/r{MAX_BRANDS + 4}" in kept


def test_headers_of_another_operator_or_unreadable_ones_refuse_a_record() -> None:
    assert header_refusal(Stamp(None, None), "acme") is None
    assert header_refusal(Stamp("acme", "acme-eu"), "acme") is None
    assert header_refusal(Stamp("other", None), "acme")[0] == RecordReason.WRONG_OPERATOR  # type: ignore[index]
    assert header_refusal(Stamp("acme", "no spaces"), "acme")[0] == RecordReason.BAD_HEADER  # type: ignore[index]


def test_a_record_keyed_or_placed_otherwise_than_its_body_says_is_refused() -> None:
    message = event("round.dealt")
    right = partition_for_key(b"p1", 3)
    assert key_refusal(message, b"p1", right, 3) is None
    assert key_refusal(message, b"p1", (right + 1) % 3, None) is None  # partition not checked
    assert key_refusal(message, b"p2", right, 3)[0] == RecordReason.KEY_MISMATCH  # type: ignore[index]
    assert key_refusal(message, None, right, 3)[0] == RecordReason.KEY_MISMATCH  # type: ignore[index]
    wrong = key_refusal(message, b"p1", (right + 1) % 3, 3)
    assert wrong is not None and wrong[0] == RecordReason.WRONG_PARTITION


def test_the_type_header_only_saves_parsing_what_the_service_does_not_read() -> None:
    reads = frozenset({"round.dealt"})
    assert wanted(reads, b"round.dealt") and wanted(reads, None) and wanted(None, b"x")
    assert not wanted(reads, b"round.settled")
