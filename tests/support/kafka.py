"""A Kafka broker for the tests: KAFKA_BOOTSTRAP_SERVERS, else Docker, else the local jars."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "deploy" / "kafka" / "kafka.sh"
# Cold machines download ~45 MB of jars first; kafka.sh bounds the start (KAFKA_START_TIMEOUT).
UP_TIMEOUT_S = 600
DOWN_TIMEOUT_S = 60
# Kafka 3.6 in KRaft mode; testcontainers' KafkaContainer drives Confluent's images only.
DOCKER_IMAGE = os.environ.get("HOLDEM_KAFKA_IMAGE", "confluentinc/cp-kafka:7.6.0")


class BrokerUnavailableError(RuntimeError):
    """No broker could be found or started: Kafka tests fail rather than skip."""


def docker_engine_answers() -> bool:
    """True when a Docker engine replies to a ping; cheap and silent when there is none."""
    try:
        import docker  # imported here: only this path needs it, unit runs stay light

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # no socket, no permission, no daemon: all mean "no Docker"
        return False


@contextlib.contextmanager
def docker_broker() -> Iterator[str]:
    """A throwaway KRaft broker in a container, configured like deploy/kafka/kafka.sh's."""
    from testcontainers.community.kafka import KafkaContainer

    container = KafkaContainer(DOCKER_IMAGE).with_kraft()
    for key, value in {
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_MIN_INSYNC_REPLICAS": "1",
        "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
    }.items():
        container.with_env(key, value)
    # Not `with container:`, whose __enter__ would start it without our start-up timeout.
    container.start(timeout=120)
    try:
        yield container.get_bootstrap_server()
    finally:
        container.stop()


@contextlib.contextmanager
def local_broker() -> Iterator[str]:
    """deploy/kafka/kafka.sh up in a temporary run dir; always brought down and removed after."""
    run_dir = Path(tempfile.mkdtemp(prefix="holdem-kafka-"))
    # --watch: if this process is killed outright, the script's watchdog still stops the JVM.
    up = [str(KAFKA_SH), "up", "--dir", str(run_dir), "--watch", str(os.getpid())]
    try:
        try:
            done = subprocess.run(
                up, capture_output=True, text=True, timeout=UP_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise BrokerUnavailableError(f"kafka.sh up took over {UP_TIMEOUT_S}s") from exc
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise BrokerUnavailableError(
                f"kafka.sh up failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
            )
        yield lines[-1]
    finally:
        subprocess.run(
            [str(KAFKA_SH), "down", "--dir", str(run_dir)],
            capture_output=True,
            timeout=DOWN_TIMEOUT_S,
            check=False,
        )
        shutil.rmtree(run_dir, ignore_errors=True)


@contextlib.contextmanager
def kafka_broker() -> Iterator[str]:
    """The bootstrap address of a reachable broker, in the order DESIGN.md fixes."""
    if bootstrap := os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        yield bootstrap
        return
    source = docker_broker if docker_engine_answers() else local_broker
    with contextlib.ExitStack() as stack:
        try:
            bootstrap = stack.enter_context(source())
        except BrokerUnavailableError:
            raise
        except Exception as exc:  # e.g. image pull refused: say which way was tried
            raise BrokerUnavailableError(f"{source.__name__} failed: {exc!r}") from exc
        yield bootstrap
