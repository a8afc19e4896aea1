"""The compose stack as a session fixture: an engine (deploy/docker/engine.sh provisions one where
it can), the images built once, `docker compose up --wait` under a project name and host ports of
this run only, `docker compose down -v` at the end. No engine is a failure, never a skip."""

from __future__ import annotations

import os
import secrets
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest
from support.compose import (
    ENGINE,
    PORTS,
    PRINCIPALS,
    REPO,
    SERVICES,
    STACK,
    UP_TIMEOUT_S,
    ComposeStack,
    engine_answers,
    free_ports,
)


# Per module: the stack is down before the next module's (holdem.testing's own stack) comes up.
@pytest.fixture(scope="module")
def compose_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComposeStack]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    engine_was_up = engine_answers(env)
    # stack.sh env: the engine (provisioned when none answers and this is root with apt), the
    # base images (upstream, or built from Debian's packages), the secrets of this run.
    secrets_dir = tmp_path_factory.mktemp("compose-secrets")
    provision = subprocess.run(
        [str(STACK), "env"],
        env={**env, "HOLDEM_SECRETS_DIR": str(secrets_dir)},
        capture_output=True,
        text=True,
        timeout=UP_TIMEOUT_S,
    )
    if provision.returncode != 0:
        last = (provision.stderr.strip().splitlines() or ["(no output)"])[-1]
        pytest.fail(f"container tests not run: no Docker engine or images: {last}", pytrace=False)
    for line in provision.stdout.splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value
    started_engine = not engine_was_up
    project = f"holdemtest{uuid.uuid4().hex[:8]}"
    ports = dict(zip(PORTS, free_ports(len(PORTS)), strict=True))
    passwords = {p: secrets.token_hex(12) for p in PRINCIPALS}
    env.update({f"HOLDEM_{name}_PORT": str(port) for name, port in ports.items()})
    # The query's metrics port is not published here: the test reads it through Prometheus.
    env["HOLDEM_QUERY_METRICS_PORT"] = str(free_ports(1)[0])
    env["HOLDEM_AUDITOR_METRICS_PORT"] = str(free_ports(1)[0])  # and the auditor's
    env.update({f"HOLDEM_{p.upper()}_PASSWORD": pw for p, pw in passwords.items()})
    env["HOLDEM_BACKOFFICE_ADMIN_PASSWORD"] = secrets.token_hex(12)  # its web pages' first user
    stack = ComposeStack(project, env, ports["KAFKA"], ports["PROMETHEUS"], passwords)
    try:
        started = time.monotonic()
        stack.compose("build", timeout=UP_TIMEOUT_S)
        stack.figures["build_s"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        try:
            stack.compose(
                "up", "--detach", "--wait", "--wait-timeout", str(UP_TIMEOUT_S),
                timeout=UP_TIMEOUT_S + 60,
            )  # fmt: skip
        except AssertionError as error:
            logs = "\n".join(
                stack.logs(s, 15)
                for s in (
                    "kafka-controller",
                    "kafka",
                    "topic-init",
                    *SERVICES,
                    "auditor",
                    "postgres",
                    "backoffice-init",
                )
            )
            raise AssertionError(f"{error}\n{logs}") from None
        stack.figures["up_wait_s"] = round(time.monotonic() - started, 1)
        yield stack
    finally:
        # The images of this project too (the build cache stays: the next session's are quick).
        down = ["down", "--volumes", "--remove-orphans", "--rmi", "local"]
        subprocess.run(
            ["docker", "compose", "-p", project, *down],
            cwd=REPO,
            env=env,
            capture_output=True,
            timeout=300,
        )
        if started_engine:
            subprocess.run([str(ENGINE), "down"], env=env, capture_output=True, timeout=120)
