"""Every decision record says whether it still holds: a Status line under its title, and what
replaced it where something did."""

from __future__ import annotations

import re
from pathlib import Path

ADRS = sorted((Path(__file__).resolve().parents[2] / "docs" / "adr").glob("*.md"))
STATUS = re.compile(r"^Status: (superseded in part|superseded|accepted|proposed)\b.*$", re.M)


def test_every_adr_has_a_status_line_and_names_what_superseded_it() -> None:
    assert ADRS
    for path in ADRS:
        head = "\n".join(path.read_text().splitlines()[:6])
        found = STATUS.search(head)
        assert found, f"{path.name}: no Status line under its title"
        if found.group(1).startswith("superseded"):
            assert re.search(r"^Superseded-by: ADR \d{3}", head, re.M), path.name


def test_adr_numbers_are_unique_and_match_their_titles() -> None:
    numbers = [path.name[:3] for path in ADRS]
    assert len(numbers) == len(set(numbers))
    for path in ADRS:
        assert path.read_text().startswith(f"# ADR {path.name[:3]}"), path.name
