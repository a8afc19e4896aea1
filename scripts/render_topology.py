"""Write the topology (holdem.core.topology) into docs/services-design.md, between its markers;
``--check``: exit 1 if the page is not current (tests/unit/test_topology.py asks the same)."""

from __future__ import annotations

import sys
from pathlib import Path

from holdem.core.topology import table

PAGE = Path(__file__).resolve().parents[1] / "docs" / "services-design.md"
BEGIN = "<!-- topology: begin (scripts/render_topology.py writes this table) -->\n"
END = "<!-- topology: end -->\n"


def rendered(text: str) -> str:
    """``text`` with the table between the markers replaced by the current one."""
    head, found, rest = text.partition(BEGIN)
    if not found or END not in rest:
        raise SystemExit(f"{PAGE}: no topology markers")
    return head + BEGIN + table() + END + rest.split(END, 1)[1]


def main(argv: list[str]) -> int:
    text = PAGE.read_text()
    new = rendered(text)
    if "--check" in argv:
        return 0 if new == text else 1
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
