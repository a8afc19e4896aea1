"""docs/operator-guide.md stays true to the contracts: its examples parse, nothing is left out."""

from __future__ import annotations

import re
from pathlib import Path

from holdem.core.contracts import (
    ADMIN_TYPES,
    ALL_MODELS,
    COMMAND_TYPES,
    OperatorRefusal,
    Reason,
    parse,
)

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "operator-guide.md"


def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def examples() -> list[str]:
    return re.findall(r"```json\n(.*?)\n```", guide(), re.S)


def test_every_example_is_a_valid_command_and_every_command_has_one() -> None:
    commands = [
        parse("admin" if '"type": "admin.' in example else "commands", example)
        for example in examples()
    ]
    assert sorted(command.type for command in commands) == sorted(COMMAND_TYPES | ADMIN_TYPES)


def test_every_event_type_and_every_rejection_reason_is_named() -> None:
    text = guide()
    types = {model.model_fields["type"].default for model in ALL_MODELS}
    commands = COMMAND_TYPES | ADMIN_TYPES
    assert {t for t in types if f"`{t}`" not in text and t not in commands} == set()
    reasons = [*Reason, *OperatorRefusal]
    assert {reason.value for reason in reasons if f"`{reason.value}`" not in text} == set()
