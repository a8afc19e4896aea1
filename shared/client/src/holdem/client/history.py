"""``holdem history PLAYER`` and ``holdem round ROUND_ID --player P``: a player's last rounds, or
one round, as localized summaries from the query service (``holdem.client.queries``).

A round query names its player: queries are keyed, and so partitioned, by the player they are
about (the query service holds a player's rounds on that player's partition only). Connects as
the ``HOLDEM_KAFKA_*`` variables (or ``--env-file``) say, on ``HOLDEM_TOPIC_PREFIX``'s topics.
Exit status: 0 answered, 1 refused (unknown player or round, ...) or unreachable, 2 usage.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from aiokafka.errors import KafkaError

from holdem.client.queries import QueryClient, QueryRefusedError
from holdem.client.watch import StalledError
from holdem.core.contracts.queries import HISTORY_DEFAULT, HISTORY_KEPT
from holdem.core.summary import render
from holdem.core.terms import LANGUAGES
from holdem.core.wire.connection import ConnectionConfigError, KafkaConnection


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--lang", choices=LANGUAGES, default="en", help="language (default en)")
    parser.add_argument("--env-file", help="HOLDEM_KAFKA_* file, e.g. DIR/clients/operator.env")
    parser.add_argument("--within", type=float, default=10.0, help="seconds to wait for a reply")
    return parser


def _connection(env_file: str | None) -> KafkaConnection:
    return KafkaConnection.from_file(env_file) if env_file else KafkaConnection.from_env()


async def _history(args: argparse.Namespace, out: TextIO) -> None:
    async with QueryClient(_connection(args.env_file), within_s=args.within) as client:
        reply = await client.history(args.player, limit=args.n, table_id=args.table)
    if not reply.rounds:
        print(f"{args.player}: no finished real-money round", file=out)
    print("\n\n".join(render(view, args.lang) for view in reply.rounds), file=out)


async def _round(args: argparse.Namespace, out: TextIO) -> None:
    async with QueryClient(_connection(args.env_file), within_s=args.within) as client:
        reply = await client.summary(args.player, args.round_id, args.lang)
    print(reply.text, file=out)


async def _bounded(action: Awaitable[None], within_s: float) -> None:
    async with asyncio.timeout(within_s):
        await action


def run_cli(
    action: Callable[[argparse.Namespace, TextIO], Awaitable[None]],
    args: argparse.Namespace,
    prog: str,
    refusals: tuple[type[Exception], ...] = (QueryRefusedError,),
) -> int:
    """Run one CLI ``action`` (bounded by ``args.within``): 0 done, 1 refused (one of
    ``refusals``) or unreachable, each a one-line message on stderr."""
    try:
        asyncio.run(_bounded(action(args, sys.stdout), args.within + 30))
    except refusals as refused:
        print(f"{prog}: refused: {refused}", file=sys.stderr)
        return 1
    except (KafkaError, ConnectionConfigError, StalledError, TimeoutError) as failed:
        print(f"{prog}: no answer: {type(failed).__name__}: {failed}", file=sys.stderr)
        return 1
    return 0


def history_main(argv: list[str] | None = None) -> int:
    """``holdem history PLAYER [--lang xx] [-n N] [--table TABLE]``"""
    parser = _parser("holdem history")
    parser.add_argument("player", help="the player's id")
    parser.add_argument(
        "-n",
        type=int,
        default=None,
        help=f"rounds, newest first (default and most: the table's history length, "
        f"{HISTORY_DEFAULT} unless the table says otherwise; at most {HISTORY_KEPT})",
    )
    parser.add_argument("--table", default=None, help="only the rounds at this table")
    args = parser.parse_args(argv)
    if args.n is not None and not 1 <= args.n <= HISTORY_KEPT:
        parser.error(f"-n must be 1..{HISTORY_KEPT}")
    return run_cli(_history, args, "holdem history")


def round_main(argv: list[str] | None = None) -> int:
    """``holdem round ROUND_ID --player P [--lang xx]``"""
    parser = _parser("holdem round")
    parser.add_argument("round_id", help="the round's id")
    parser.add_argument("--player", required=True, help="the round's player (queries go by it)")
    return run_cli(_round, parser.parse_args(argv), "holdem round")
