"""The whole audit as the streaming audit's oracle (ADR 040): every record list a test hands the
whole audit (``violations``, ``check``) is also folded by ``AuditFold``, and the two must agree
on the verdict, on what they found and on the counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from holdem.harness import audit
from holdem.harness.audit_fold import fold
from holdem.harness.audit_log import Record

FOLDED = Counter[str]()  # record lists folded, by the function they were handed to


def agree(records: list[Record], *, require_ended: bool = True, **options: Any) -> None:
    whole = audit.check(records, require_ended=require_ended, operator=options.get("operator"))
    if options.get("unseal") is not None:
        whole = audit.AuditReport(
            whole.records,
            whole.rounds,
            whole.ended,
            audit.violations(records, require_ended=require_ended, unseal=options["unseal"]),
            whole.forced,
        )
    streamed = fold(records, require_ended=require_ended, **options)
    assert sorted(streamed.violations) == sorted(whole.violations), (
        "the streaming audit disagrees with the whole audit:\n  whole: "
        + "\n         ".join(whole.violations)
        + "\n  fold:  "
        + "\n         ".join(streamed.violations)
    )
    counts = (streamed.records, streamed.rounds, streamed.ended, streamed.forced)
    assert counts == (whole.records, whole.rounds, whole.ended, whole.forced)


def violations_folded_too(original: Callable[..., list[str]]) -> Callable[..., list[str]]:
    def violations(
        records: Iterable[Record], balances: Any = None, *, require_ended: bool = True,
        unseal: Any = None,
    ) -> list[str]:  # fmt: skip
        records = list(records)
        agree(records, require_ended=require_ended, unseal=unseal)
        FOLDED["violations"] += 1
        return original(records, balances, require_ended=require_ended, unseal=unseal)

    return violations


def check_folded_too(original: Callable[..., audit.AuditReport]) -> Callable[..., Any]:
    def check(
        records: Iterable[Record], *, require_ended: bool = True, operator: str | None = None
    ) -> audit.AuditReport:
        records = list(records)
        agree(records, require_ended=require_ended, operator=operator)
        FOLDED["check"] += 1
        return original(records, require_ended=require_ended, operator=operator)

    return check
