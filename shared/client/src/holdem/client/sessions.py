"""``holdem end-session PLAYER TABLE``: end a player's session at a table (ADR 020); a round of
it waiting for his decision is finished by the table's timeout policy.

Connects as the ``HOLDEM_KAFKA_*`` variables (or ``--env-file``) say, on
``HOLDEM_TOPIC_PREFIX``'s topics, and waits for the dealer's answer. Exit status: 0 ended,
1 refused (no open session, ...) or no answer, 2 usage.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from holdem.client.history import run_cli
from holdem.client.operator import Operator
from holdem.client.player import Player, Refused
from holdem.core.contracts import OperatorEndReason
from holdem.core.wire.connection import KafkaConnection


async def _end(args: argparse.Namespace, out: TextIO) -> None:
    connection = (
        KafkaConnection.from_file(args.env_file) if args.env_file else KafkaConnection.from_env()
    )
    async with Operator(connection) as operator:
        player = Player(operator, args.player, step_s=args.within, table_id=args.table)
        reason = OperatorEndReason(args.reason) if args.reason else None
        ended = await player.end_session(reason, command_id=args.command_id)
    print(f"{args.player} at {args.table}: session {ended.session_id} {ended.reason}", file=out)


def end_session_main(argv: list[str] | None = None) -> int:
    """``holdem end-session PLAYER TABLE [--reason terminated|blocked|limit] [--command-id ID]``"""
    parser = argparse.ArgumentParser(prog="holdem end-session", description=__doc__)
    parser.add_argument("player", help="the player's id")
    parser.add_argument("table", help="the table's id")
    parser.add_argument(
        "--reason",
        choices=[r.value for r in OperatorEndReason],
        help="the operator's reason (ADR 028; default: a plain end, reason ended)",
    )
    parser.add_argument("--command-id", help="the idempotency key (default: a new one)")
    parser.add_argument("--env-file", help="HOLDEM_KAFKA_* file, e.g. DIR/clients/operator.env")
    parser.add_argument("--within", type=float, default=10.0, help="seconds to wait for the end")
    return run_cli(_end, parser.parse_args(argv), "holdem end-session", (Refused,))
