"""Produce requests sent again, per process, from the processes' logs: aiokafka logs a warning
for every partition's batch it sends again ("Got error produce response ... retrying"), and for
every produce request that failed whole ("Got error produce response: ..."), ADR 036."""

from __future__ import annotations

from pathlib import Path

RETRIED = "Got error produce response"


def produce_retries(log_dir: Path) -> dict[str, int]:
    """Each ``*.log`` of ``log_dir`` (a process's, by its name) and the batches it sent again."""
    counts: dict[str, int] = {}
    for path in sorted(log_dir.glob("*.log")):
        with path.open(errors="replace") as lines:
            counts[path.stem] = sum(RETRIED in line for line in lines)
    return counts
