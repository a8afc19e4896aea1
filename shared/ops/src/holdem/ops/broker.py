"""The local broker of ``kafka.sh`` (keep, restart, wipe) and the principals' connections."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from holdem.core.wire.connection import PREFIX, KafkaConnection
from holdem.ops import acl

BROKER_UP_TIMEOUT_S = 600.0  # a cold machine downloads the broker's jars first
BROKER_DOWN_TIMEOUT_S = 60.0


class LaunchError(RuntimeError):
    """A broker or service that did not start, or died before it was ready."""


def kafka_script() -> Path:
    """deploy/kafka/kafka.sh of this checkout, or the one HOLDEM_KAFKA_SH names."""
    if named := os.environ.get("HOLDEM_KAFKA_SH"):
        return Path(named)
    for root in (Path(__file__).resolve().parents[5], Path.cwd()):
        script = root / "deploy" / "kafka" / "kafka.sh"
        if script.is_file():
            return script
    raise LaunchError(
        "deploy/kafka/kafka.sh not found: run from the repository or set HOLDEM_KAFKA_SH"
    )


def read_principals(clients_dir: Path) -> dict[str, KafkaConnection]:
    """Every ``<principal>.env`` of a clients dir (``kafka.sh up`` writes one per principal)."""
    found = {path.stem: KafkaConnection.from_file(path) for path in clients_dir.glob("*.env")}
    missing = set(acl.PRINCIPALS) - set(acl.LATER_PRINCIPALS) - set(found)
    if missing:
        raise LaunchError(f"{clients_dir}: no env file for {sorted(missing)}")
    return found


def principals_from_env(bootstrap: str | None = None) -> dict[str, KafkaConnection]:
    """An outside broker's principals: the env files of ``HOLDEM_KAFKA_CLIENTS_DIR`` if set,
    else every principal is the one the ``HOLDEM_KAFKA_*`` variables describe."""
    if clients := os.environ.get(f"{PREFIX}CLIENTS_DIR"):
        found = read_principals(Path(clients))
        if bootstrap:
            found = {name: c.with_bootstrap(bootstrap) for name, c in found.items()}
        return found
    one = KafkaConnection.from_env(bootstrap=bootstrap)
    return dict.fromkeys(acl.PRINCIPALS, one)


def _broker_pid(run_dir: Path) -> int:
    """The live broker JVM of ``run_dir`` (its pid file, checked against the command line as
    kafka.sh does: a pid file may outlive its process)."""
    try:
        pid = int((run_dir / "pid").read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except (OSError, ValueError) as error:
        raise LaunchError(f"no running broker in {run_dir}: {error}") from error
    if b"kafka.Kafka " + str(run_dir / "server.properties").encode() not in cmdline:
        raise LaunchError(f"pid {pid} of {run_dir} is not its broker")
    return pid


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


class LocalBroker:
    """A real Kafka from ``kafka.sh up`` in a run dir, with SCRAM users and the default ACL set
    applied: one node, or ``nodes`` (3: replication factor 3, min.insync.replicas 2) whose
    bootstrap lists them all and whose nodes can be killed and started one at a time. Fresh
    storage at every ``up`` and dropped at ``down`` unless ``keep`` (then ``up`` restarts it on
    its data, ports and credentials: ``make serve``); a temp dir of ours is removed at ``down``.
    ``proxied_port`` (one node): a second SASL listener advertised as 127.0.0.1:``proxied_port``,
    where a proxy of the caller's (toxiproxy) listens and forwards to ``proxied_listener``; the
    clients of ``proxied_principals`` go through it, those of ``principals`` do not."""

    def __init__(
        self,
        run_dir: Path | None = None,
        *,
        tls: bool = False,
        keep: bool = False,
        watch: bool = True,
        nodes: int = 1,
        proxied_port: int | None = None,
    ) -> None:
        if nodes < 1 or (tls and nodes > 1):
            raise ValueError(f"nodes must be >= 1, and TLS is for one node only: {nodes}, {tls}")
        if proxied_port is not None and nodes > 1:
            raise ValueError(f"a proxied listener is for one node only, not {nodes}")
        self._own_dir = run_dir is None
        self.run_dir = run_dir or Path(tempfile.mkdtemp(prefix="holdem-kafka-"))
        self.bootstrap: str | None = None
        self.keep = keep
        self.nodes = nodes
        self._flags = [
            *(["--tls"] if tls else []),
            *([] if keep else ["--wipe"]),
            *(["--nodes", str(nodes)] if nodes > 1 else []),
            *(["--proxied-port", str(proxied_port)] if proxied_port is not None else []),
        ]
        self._watch = watch  # stop (and drop) the broker when this process dies

    def up(self) -> str:
        command = ["up", "--dir", str(self.run_dir), *self._flags]
        if self._watch:  # should this process be killed outright, the script stops the broker
            command += ["--watch", str(os.getpid())]
        done = self._run(command, BROKER_UP_TIMEOUT_S)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise LaunchError(
                f"kafka.sh up failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
            )
        self.bootstrap = lines[-1]
        self.authorize("")
        return self.bootstrap

    @property
    def clients_dir(self) -> Path:
        return self.run_dir / "clients"

    def connection(self, principal: str) -> KafkaConnection:
        """How ``principal`` (admin, the services, operator, backoffice) connects."""
        return KafkaConnection.from_file(self.clients_dir / f"{principal}.env")

    def principals(self) -> dict[str, KafkaConnection]:
        return read_principals(self.clients_dir)

    def proxied_principals(self) -> dict[str, KafkaConnection]:
        """Every principal as it connects through the proxy (``proxied_port``)."""
        return read_principals(self.run_dir / "proxied-clients")

    @property
    def proxied_listener(self) -> str:
        """host:port the proxied listener binds: where the proxy forwards to."""
        try:
            listen, _advertised = (self.run_dir / "proxied").read_text().split()
        except (OSError, ValueError) as error:
            raise LaunchError(f"no proxied listener in {self.run_dir}: {error}") from error
        return f"127.0.0.1:{listen}"

    def authorize(self, prefix: str) -> None:
        """Apply the ACL set of topic ``prefix`` as admin (in a thread: callable from a loop)."""
        admin = self.connection("admin")
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, acl.apply(admin, acl.plan(prefix))).result()

    def down(self, *, wipe: bool | None = None) -> None:
        """Stop the broker. Its data and credentials are dropped unless ``keep`` (or ``wipe``
        says otherwise); the logs of a given run dir stay, a temp dir of ours goes."""
        wipe = not self.keep if wipe is None else wipe
        flags = ["--wipe"] if wipe else []
        self._run(["down", "--dir", str(self.run_dir), *flags], BROKER_DOWN_TIMEOUT_S)
        self.bootstrap = None
        if self._own_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def restart(self) -> str:
        """``kafka.sh restart``: down and up on the same data, ports and credentials."""
        command = ["restart", "--dir", str(self.run_dir)]
        if self._watch:
            command += ["--watch", str(os.getpid())]
        done = self._run(command, BROKER_UP_TIMEOUT_S)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise LaunchError(f"kafka.sh restart failed:\n{done.stderr[-3000:]}")
        self.bootstrap = lines[-1]
        return self.bootstrap

    def running(self) -> bool:
        """Whether the JVM of a single broker's run dir lives now (one that halted itself, on a
        log dir that failed, say, does not)."""
        if self.nodes != 1:
            raise ValueError("a cluster's nodes live one by one: kafka.sh status")
        try:
            pid = _broker_pid(self.run_dir)
        except LaunchError:
            return False
        return not _zombie(pid)

    def kill(self) -> int:
        """SIGKILL a single broker (a crash: no controlled shutdown, no flush) and wait until
        it is gone; ``up`` then starts it on its data when ``keep``. Returns its pid."""
        if self.nodes != 1:
            raise ValueError("a cluster loses one node at a time: kill_node(n)")
        pid = _broker_pid(self.run_dir)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + BROKER_DOWN_TIMEOUT_S
        while Path(f"/proc/{pid}").exists() and not _zombie(pid):
            if time.monotonic() > deadline:
                raise LaunchError(f"broker pid {pid} still alive after SIGKILL")
            time.sleep(0.1)
        self.bootstrap = None
        return pid

    def kill_node(self, node: int) -> None:
        """SIGKILL node ``node`` (1..nodes) of a cluster: a broker crash, no goodbye."""
        self._node("kill-node", node, BROKER_DOWN_TIMEOUT_S)

    def stop_node(self, node: int) -> None:
        """Stop node ``node`` in order (controlled shutdown: it hands its leaderships over)."""
        self._node("stop-node", node, BROKER_DOWN_TIMEOUT_S)

    def start_node(self, node: int) -> None:
        """Start node ``node`` again on its data and wait until it serves."""
        self._node("start-node", node, BROKER_UP_TIMEOUT_S)

    def _node(self, action: str, node: int, timeout: float) -> None:
        if self.nodes == 1 or not 1 <= node <= self.nodes:  # one broker: use down/up/restart
            raise ValueError(f"no node {node} to {action} in a {self.nodes}-node broker")
        done = self._run([action, str(node), "--dir", str(self.run_dir)], timeout)
        if done.returncode != 0:
            raise LaunchError(f"kafka.sh {action} {node} failed:\n{done.stderr[-3000:]}")

    def _run(self, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [str(kafka_script()), *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise LaunchError(f"kafka.sh {args[0]} took over {timeout:.0f}s") from exc

    def __enter__(self) -> str:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()
