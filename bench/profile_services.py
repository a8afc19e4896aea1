"""`make profile`: a flame graph (SVG) per service under a closed-loop load, from py-spy.

A local broker, the services as processes, ``--players`` players playing rounds back to back;
once the load runs, ``py-spy record`` samples each service for ``--seconds`` (idle threads
left out) into ``--out``/<service>.svg. py-spy comes from ``uv run --with py-spy`` (not a
dependency of the project); it attaches to a running process, which needs ptrace rights (root,
or kernel.yama.ptrace_scope 0)."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from pathlib import Path

from bench_services import PARTITIONS, local_broker

from holdem.client import Operator
from holdem.core.strategy import always_call
from holdem.core.wire.topics import Topics
from holdem.harness.load import Plan, fund, play

OUT = Path(__file__).resolve().parents[1] / "docs" / "flamegraphs"
PROFILED = ("wallet", "dealer", "settlement")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=20, help="sampled per service")
    parser.add_argument("--players", type=int, default=128)
    parser.add_argument("--warmup", type=float, default=10.0, help="load before sampling, s")
    parser.add_argument("--out", type=Path, default=OUT)
    return parser.parse_args(argv)


async def record(pid: int, svg: Path, seconds: int) -> None:
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("py-spy not found: run through `uv run --with py-spy` (make profile)")
    argv = [spy, "record", "-p", str(pid), "-d", str(seconds), "-o", str(svg), "--nonblocking"]
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    _, err = await process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"py-spy failed on pid {pid}: {err.decode()[-500:]}")


async def main(args: argparse.Namespace) -> None:
    async with (
        local_broker("holdem-profile-") as (principals, launcher, _),
        launcher,
        Operator(principals["operator"], Topics(), PARTITIONS) as operator,
    ):
        plan = Plan(rounds=100_000, players=args.players, voids=0, step_s=60.0)
        await fund(operator, plan)
        stop = asyncio.Event()
        load = asyncio.create_task(play(operator, plan, always_call, stop))
        await asyncio.sleep(args.warmup)
        args.out.mkdir(parents=True, exist_ok=True)
        pids = {name: launcher.services[name].pid for name in PROFILED}
        await asyncio.gather(
            *(
                record(pid, args.out / f"{name}.svg", args.seconds)
                for name, pid in pids.items()
                if pid
            )
        )
        stop.set()
        await asyncio.wait_for(load, 120)
    print(f"flame graphs in {args.out}: {', '.join(f'{n}.svg' for n in PROFILED)}")


if __name__ == "__main__":
    asyncio.run(main(parse_args(sys.argv[1:])))
