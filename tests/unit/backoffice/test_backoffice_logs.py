"""The back office logs as the services do: structlog, one JSON object per line on stderr."""

from __future__ import annotations

import json
import subprocess
import sys

PROGRAM = """
import structlog
from holdem.backoffice.logs import configure_logging
configure_logging("backoffice-projection", "INFO")
log = structlog.get_logger("holdem.backoffice.project")
log.debug("not shown")
log.warning("topic does not exist: not projected", topic="t1.holdem.tables")
"""


def test_a_projection_log_line_is_one_json_object_naming_the_process_and_its_fields() -> None:
    # In a process of its own: structlog's configuration is global.
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120, check=True
    )
    [line] = done.stderr.strip().splitlines()
    entry = json.loads(line)
    assert entry["service"] == "backoffice-projection"
    assert entry["level"] == "warning"
    assert entry["event"] == "topic does not exist: not projected"
    assert entry["topic"] == "t1.holdem.tables"
    assert "timestamp" in entry
