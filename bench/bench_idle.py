"""Idle CPU per service (issue 28, item 4: a service with nothing to do uses under 1% of a
core), beside the bare relay's idle workers (aiokafka consumers and transactional producers
with the services' 50 ms fetch wait, doing nothing else): both started on one broker, left
``--settle`` seconds, then their CPU (user + system, /proc) over ``--seconds``. Printed, never
asserted."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from bench_services import PARTITIONS, converged, cpu_seconds, local_broker, probe
from services_relay import READS, Relay, pick_template

from holdem.client import Operator
from holdem.core.wire.topics import Topics
from holdem.runtime.topic_setup import ensure_topics


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long CPU is counted")
    parser.add_argument("--settle", type=float, default=10.0, help="wait before counting")
    args, _ = parser.parse_known_args(argv)  # run.py's own arguments pass through
    return args


async def idle_share(pids: dict[str, int | None], args: argparse.Namespace) -> dict[str, float]:
    """Share of one core each process used over ``args.seconds``, after ``args.settle``."""
    await asyncio.sleep(args.settle)
    before = {name: cpu_seconds([pid]) for name, pid in pids.items()}
    started = time.monotonic()
    await asyncio.sleep(args.seconds)
    elapsed = time.monotonic() - started
    return {name: (cpu_seconds([pid]) - before[name]) / elapsed for name, pid in pids.items()}


async def main(args: argparse.Namespace) -> None:
    async with local_broker("holdem-bench-idle-") as (principals, launcher, log_dir):
        admin, topics = principals["admin"], Topics()
        async with launcher:
            async with Operator(principals["operator"], topics, PARTITIONS) as operator:
                await probe(operator)  # a few rounds first: their state and a relay template
            services = await idle_share(
                {label: s.pid for label, s in launcher.services.items()}, args
            )
        template = pick_template(await converged(admin, topics))  # from the probe's rounds
        relay_topics = Topics.unique("relay")
        await ensure_topics(admin, relay_topics, PARTITIONS)
        async with Relay(admin, relay_topics, template, log_dir) as relay_run:
            relay = await idle_share(
                {f"relay-{n}": pid for n, pid in zip(READS, relay_run.pids, strict=True)}, args
            )
    print(f"idle CPU over {args.seconds:.0f} s after {args.settle:.0f} s (goal: < 1% of a core)")
    for name, share in {**services, **relay}.items():
        goal = "" if name.startswith("relay") else ("  ok" if share < 0.01 else "  MISSED")
        print(f"  {name:24} {100 * share:6.2f}% of a core{goal}")


if __name__ == "__main__":
    asyncio.run(main(parse_args(sys.argv[1:])))
