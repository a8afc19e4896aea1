"""A tool a test needs, from the deploy/*/provision.sh that fetches or builds it once and prints
where it is; and the children the tests start, bound to die with the test process."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import signal
import subprocess
from pathlib import Path

import pytest

PR_SET_PDEATHSIG = 1


@functools.cache
def _provision(script: Path, timeout_s: int, what: str) -> Path | str:
    """The path ``script`` prints last, or its one-line reason why not."""
    try:
        done = subprocess.run([str(script)], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"{script} took over {timeout_s}s"
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{what} could not be provisioned: {reason}"
    return Path(lines[-1])


def provisioned(script: Path, timeout_s: int, what: str) -> Path:
    """What ``script`` provides, provisioned on first use (once per session); a failure, never a
    skip, when it cannot be had."""
    found = _provision(script, timeout_s, what)
    if isinstance(found, str):
        pytest.fail(found, pytrace=False)
    return found


def die_with_parent() -> None:
    """In the child: SIGTERM when the test process dies, so no server outlives a killed run."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def stop(process: subprocess.Popen[bytes] | None, timeout_s: float) -> int | None:
    """SIGTERM, SIGKILL after ``timeout_s``; the exit status (None: never started)."""
    if process is None:
        return None
    process.terminate()
    try:
        return process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(timeout_s)


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a server's log file."""
    text = path.read_text(errors="replace")
    return "\n".join(text.splitlines()[-lines:])
