"""Issue 26: a service that cannot reach the broker at start exits 70 (restart me), not 1.

Status 1 reads as a configuration to fix, and a supervisor may stop restarting on it; a broker
away at start is an outage like one later, which the service outlives by being restarted. A
refusal no restart changes (an authorization) still ends the start with its own error."""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aiokafka.errors import TopicAuthorizationFailedError
from support.toy import TOY

from holdem.runtime import app as app_module
from holdem.runtime import kafka
from holdem.runtime import topic_setup as topics
from holdem.runtime.app import EXIT_FATAL, BrokerUnreachableError, build_app
from holdem.runtime.settings import RuntimeSettings

TESTS = Path(__file__).resolve().parents[2]
NOWHERE = "127.0.0.1:1"  # nothing listens: every connection is refused at once


def test_a_service_whose_broker_is_unreachable_at_start_exits_70() -> None:
    script = textwrap.dedent(
        f"""
        import functools, sys
        sys.path.insert(0, {str(TESTS)!r})
        from support.toy import TOY
        from holdem.runtime import app, kafka, topic_setup as topics
        from holdem.runtime.settings import RuntimeSettings
        # The topic check's wait for a broker, 60 s in a service, cut to one second.
        kafka.ensure_topics = functools.partial(topics.ensure_topics, wait=1.0)
        app.run(app.build_app(TOY, RuntimeSettings(kafka_bootstrap={NOWHERE!r})))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == EXIT_FATAL, done.stderr[-2000:]
    lines = (done.stdout + done.stderr).splitlines()
    fatal = [line for line in lines if "fatal: exiting" in line]
    assert len(fatal) == 1 and "BrokerUnreachableError" in fatal[0], lines[-20:]


async def test_a_refusal_at_start_is_raised_not_taken_for_an_outage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exits: list[BaseException] = []
    monkeypatch.setattr(app_module, "exit_fatally", lambda _service, error: exits.append(error))

    async def refused(*_: object, **__: object) -> None:
        raise TopicAuthorizationFailedError("this principal may not describe the topics (test)")

    monkeypatch.setattr(kafka, "ensure_topics", refused)
    service = build_app(TOY, RuntimeSettings(kafka_bootstrap=NOWHERE))
    with pytest.raises(TopicAuthorizationFailedError):
        await service.serve()
    assert exits == []


async def test_a_start_that_cannot_connect_is_an_outage(monkeypatch: pytest.MonkeyPatch) -> None:
    exits: list[BaseException] = []
    monkeypatch.setattr(app_module, "exit_fatally", lambda _service, error: exits.append(error))
    monkeypatch.setattr(kafka, "ensure_topics", functools.partial(topics.ensure_topics, wait=0.5))
    service = build_app(TOY, RuntimeSettings(kafka_bootstrap=NOWHERE))
    with pytest.raises(Exception):  # noqa: B017 - the error itself is what the service logs
        await service.serve()
    assert [type(error) for error in exits] == [BrokerUnreachableError]
