"""The test tiers' rule: a test that uses a fixture starting a real broker or database carries
that fixture's marker, so `make check` (which deselects those markers) never starts one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# fixture -> the marker a test using it must carry
NEEDS_MARKER = {"kafka": "kafka", "postgres": "postgres"}


def unmarked(items: Iterable[Any]) -> list[str]:
    """One line per test that uses such a fixture without its marker."""
    return [
        f"{item.nodeid} uses the {fixture} fixture without the {marker} marker"
        for item in items
        for fixture, marker in NEEDS_MARKER.items()
        if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None
    ]
