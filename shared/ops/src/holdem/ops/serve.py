"""`make serve`: the local broker (kept between runs), the topics and the four services (dealer,
wallet, settlement, query) as processes, up until Ctrl-C; prints where to connect, as whom, and
where the logs are. `--seamless` (`make serve SEAMLESS=1`): the wallet in seamless mode (ADR
015) with the reference operator wallet (holdem.client.seamless_run) answering it as the
operator principal. Unless `--no-backoffice`: the back office too (holdem.ops.back_office): a
throwaway PostgreSQL, the projection as the backoffice principal and the web pages on a free
port, whose URL and first user's generated password the banner prints. Unless `--no-auditor`:
the live auditor (holdem-auditor, issue 31) as the auditor principal, its /metrics on 9107."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from holdem.core.wire.topics import Topics
from holdem.ops import acl, back_office
from holdem.ops.broker import LocalBroker, kafka_script
from holdem.ops.create_topics import ensure_findings_topic
from holdem.ops.launcher import METRICS_PORTS, Launcher, LaunchError, ServiceProcess, free_port
from holdem.runtime.topic_setup import ensure_topics

WATCH_EVERY_S = 1.0
BACKOFFICE_METRICS = 9105  # the projection's /metrics (HOLDEM_BACKOFFICE_METRICS_PORT's default)
OPERATOR_WALLET = "operator-wallet"  # the reference operator wallet's process, in seamless mode
AUDITOR_METRICS = 9107  # the live auditor's /metrics (holdem.harness.auditor_service's default)


def default_dir() -> Path:
    """deploy/kafka/.run of this checkout: the same broker as `make kafka-up`."""
    return kafka_script().parent / ".run"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m holdem.ops.serve", description=__doc__)
    add = parser.add_argument
    add("--dir", type=Path, default=None, help="broker run dir; default deploy/kafka/.run")
    add("--wipe", action="store_true", help="start from an empty broker with new credentials")
    add("--tls", action="store_true", help="SASL_SSL (a fresh or TLS storage only)")
    add("--partitions", type=int, default=3)
    add("--nodes", type=int, default=1, help="3: a three-node cluster (a fresh or cluster dir)")
    add("--no-metrics", action="store_true", help="do not serve /metrics on 9101-9104")
    add(
        "--seamless",
        action="store_true",
        help="the wallet in seamless mode, answered by the reference operator wallet",
    )
    add("--opening", type=int, default=100_000, help="seamless: a new player's balance there")
    add("--no-backoffice", action="store_true", help="no PostgreSQL, projection nor web pages")
    add("--no-auditor", action="store_true", help="no live auditor (holdem-auditor)")
    return parser.parse_args(argv)


def banner(
    broker: LocalBroker,
    launcher: Launcher,
    ports: dict[str, int],
    extra: list[ServiceProcess] | None = None,
    *,
    seamless: bool = False,
    office: back_office.BackOffice | str | None = None,
    more: list[str] | None = None,
) -> str:
    metrics = ", ".join(f"{n} http://127.0.0.1:{p}/metrics" for n, p in ports.items()) or "off"
    processes = [*launcher.services.values(), *(extra or [])]
    logs = "\n".join(f"  {s.name}: {s.log_path}" for s in processes)
    mode = (
        "wallet: seamless, answered by the reference operator wallet (deposits are refused)\n"
        if seamless
        else ""
    )
    if isinstance(office, back_office.BackOffice):
        mode += office.line() + "\n"
    elif office:
        mode += office + "\n"
    mode += "".join(f"{line}\n" for line in more or [])
    server_log = "node-*/server.log" if broker.nodes > 1 else "server.log"
    return (
        f"serving: Kafka at {broker.bootstrap} "
        f"({broker.connection('operator').security_protocol}, SCRAM-SHA-512)\n"
        f"operator credentials: {broker.clients_dir / 'operator.env'} "
        f"(set -a; . that file; set +a: the HOLDEM_KAFKA_* variables of the SDK and tools)\n"
        f"other principals: {broker.clients_dir}/<admin|dealer|wallet|settlement|query"
        "|backoffice|auditor>.env\n"
        f"{mode}metrics: {metrics}\n"
        f"logs:\n{logs}\n  kafka: {broker.run_dir / server_log}\n"
        "Ctrl-C stops the services and the broker; its data stays (make serve WIPE=1 to wipe)"
    )


async def watch(
    launcher: Launcher, stop: asyncio.Event, extra: list[ServiceProcess] | None = None
) -> ServiceProcess | None:
    """Until ``stop``: a process that died, if one does."""
    while not stop.is_set():
        for service in [*launcher.services.values(), *(extra or [])]:
            if not service.alive:
                return service
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(WATCH_EVERY_S):
                await stop.wait()
    return None


async def serve(args: argparse.Namespace) -> int:
    run_dir = args.dir or default_dir()
    # Before anything starts: a Ctrl-C during the start-up also ends in the orderly stop below.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # No --watch: the broker must outlive a killed `make serve` with its data (the next run
    # finds it running); Ctrl-C stops it below.
    broker = LocalBroker(run_dir, tls=args.tls, keep=not args.wipe, watch=False, nodes=args.nodes)
    print(f"starting the local Kafka broker in {run_dir} ...", flush=True)
    await asyncio.to_thread(broker.up)
    broker.keep = True  # --wipe was for this start only: what is played now stays
    try:
        admin = broker.connection("admin")
        await ensure_topics(admin, Topics(), args.partitions)
        await ensure_findings_topic(admin, Topics())
        if args.seamless:  # the operator's write on holdem.seamless.replies
            await acl.apply(admin, acl.plan("", seamless=True))
        ports = {} if args.no_metrics else {n: p for n, p in METRICS_PORTS.items() if free_port(p)}
        launcher = Launcher(
            broker.bootstrap or "",
            run_dir / "services",
            partitions=args.partitions,
            metrics_ports=ports,
            credentials=broker.principals(),
            extra_env={"HOLDEM_WALLET_MODE": "seamless"} if args.seamless else {},
        )
        extra = [operator_wallet(broker, run_dir, args.opening)] if args.seamless else []
        print("starting dealer, wallet, settlement, query ...", flush=True)
        office: back_office.BackOffice | str | None = None
        more_lines: list[str] = []  # the live auditor's line
        async with launcher:
            for process in extra:
                process.start()
            try:
                if not args.no_auditor:
                    auditor = auditor_process(broker, run_dir, args.seamless)
                    if isinstance(auditor, str):
                        more_lines.append(auditor)
                    else:
                        off = args.no_metrics or not free_port(AUDITOR_METRICS)
                        auditor.env["HOLDEM_METRICS_PORT"] = "0" if off else str(AUDITOR_METRICS)
                        auditor.start()
                        extra.append(auditor)
                        if not off:
                            ports["auditor"] = AUDITOR_METRICS
                        more_lines.append(
                            "auditor: holdem-auditor as the auditor principal, findings on "
                            f"{acl.findings_topic(Topics())}"
                        )
                if not args.no_backoffice:
                    print("starting the back office (PostgreSQL, projection, web) ...", flush=True)
                    off = args.no_metrics or not free_port(BACKOFFICE_METRICS)
                    metrics_port = 0 if off else BACKOFFICE_METRICS
                    office = await back_office.start(
                        broker, run_dir / "services", metrics_port=metrics_port
                    )
                    if isinstance(office, back_office.BackOffice):
                        extra += office.processes
                        if metrics_port:
                            ports["backoffice"] = metrics_port
                print(
                    banner(
                        broker, launcher, ports, extra,
                        seamless=args.seamless, office=office, more=more_lines,
                    ),
                    flush=True,
                )  # fmt: skip
                died = await watch(launcher, stop, extra)
                if died is not None:
                    print(f"{died.label} exited:\n{died.log_tail()}", file=sys.stderr)
                    return 1
                print("\nstopping the services and the broker (data kept) ...", flush=True)
            finally:
                if isinstance(office, back_office.BackOffice):
                    await back_office.stop(office.processes)
                for process in extra:
                    await process.stop()
        return 0
    except LaunchError as error:
        print(f"serve: {error}", file=sys.stderr)
        return 1
    finally:
        await asyncio.to_thread(broker.down)


def operator_wallet(broker: LocalBroker, run_dir: Path, opening: int) -> ServiceProcess:
    """The reference operator wallet as a process of its own, as the operator principal."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")},
        **broker.connection("operator").env(),
        "PYTHONUNBUFFERED": "1",
    }
    argv = [sys.executable, "-m", "holdem.client.seamless_run", "--opening", str(opening)]
    log_path = run_dir / "services" / f"{OPERATOR_WALLET}.log"
    return ServiceProcess(OPERATOR_WALLET, env, log_path, argv=argv)


def auditor_process(broker: LocalBroker, run_dir: Path, seamless: bool) -> ServiceProcess | str:
    """The live auditor as a process of its own, as the auditor principal; or, on a storage
    formatted before that principal existed, the one line that says why it is off."""
    if not (broker.clients_dir / "auditor.env").is_file():
        return (
            "auditor: off (this broker's storage predates its auditor principal; "
            "make serve WIPE=1 makes one with it)"
        )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")},
        **broker.connection("auditor").env(),
        "HOLDEM_METRICS_HOST": "127.0.0.1",  # this host only, as the services'
        "PYTHONUNBUFFERED": "1",
        **({"HOLDEM_WALLET_MODE": "seamless"} if seamless else {}),
    }
    argv = [sys.executable, "-m", "holdem.harness.auditor_service"]
    return ServiceProcess("auditor", env, run_dir / "services" / "auditor.log", argv=argv)


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(serve(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
