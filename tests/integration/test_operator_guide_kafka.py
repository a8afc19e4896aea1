"""The operator guide, played (issue 29): every command, admin command and query the guide shows
is sent as written, through the real services on a real broker, in the order of the guide's
table "The examples, played" (section 22), and the answer is the one that table documents:
an event of the stated type caused by the example, with the stated fields; for a query, the
reply example the guide shows, field by field. An output example the guide shows is either the
answer some step produced or listed as checked for parsing only, with its reason. An example
with no row in the table fails the test.

Service-made values differ from any example: times (``*_at``, and the time a summary's text
shows) and the session id are compared by presence only; the envelope (``event_id``,
``occurred_at``) not at all, nor an output example's ``causation_id`` (the event before it, an
id the services make)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from support.kafka import Cluster
from support.stack import WAIT_S, Stack, running_stack

from holdem.core.cards import Card
from holdem.core.contracts import parse
from holdem.core.wire.connection import start_or_close
from holdem.core.wire.partitioning import partition_for_key

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "operator-guide.md").read_text()
ROLE = {"command": "commands", "admin": "admin", "query": "queries", "reply": "replies",
        "round": "rounds", "wallet": "wallet", "table": "tables"}  # fmt: skip
INPUTS = ("commands", "admin", "queries")
ENVELOPE = {"event_id", "occurred_at"}
MADE_HERE = {"session_id"}  # ids the services make: compared by presence
A_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")  # as a summary's text shows one


def same(shown: Any, got: Any) -> bool:
    if isinstance(shown, str) and isinstance(got, str):
        return A_TIME.sub("<time>", shown) == A_TIME.sub("<time>", got)
    return bool(shown == got)


@dataclass(frozen=True)
class Row:
    example: str  # the example's event_id
    answer: str  # the table's answer column, as written


def examples() -> dict[str, tuple[str, dict[str, Any]]]:
    """event_id -> (the example's line as written, its body), in the guide's order."""
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for block in re.findall(r"```json\n(.*?)\n```", GUIDE, flags=re.S):
        for line in block.splitlines():
            body = json.loads(line)
            key = f"{body['event_id']}@{body['type']}.v{body['version']}"
            assert key not in found, f"two examples {key}"
            found[key] = (line, body)
    return found


def rows() -> list[Row]:
    """The guide's table of section 22, in its order."""
    start = GUIDE.index("\n## 22. ")
    table = [line for line in GUIDE[start:].splitlines() if line.startswith("| `")]
    return [Row(*(cell.strip() for cell in line.split("|")[1:3])) for line in table]


def by_key(row: Row) -> str:
    """The example a row names: ``e-1`` (its event_id) with its type and version."""
    match = re.fullmatch(r"`([^`]+)` `([a-z_.]+) v(\d+)`", row.example)
    assert match, f"row {row.example!r}: write `event_id` `type vN`"
    return f"{match[1]}@{match[2]}.v{match[3]}"


def figures(text: str) -> dict[str, Any]:
    """The ``name=value`` pairs an answer states (values as JSON)."""
    return {name: json.loads(value) for name, value in re.findall(r"`(\w+)=([^`]+)`", text)}


def test_every_example_of_the_guide_has_a_row_and_every_row_an_example() -> None:
    listed = [by_key(row) for row in rows()]
    assert len(listed) == len(set(listed)), "an example listed twice"
    shown = set(examples())
    assert shown - set(listed) == set(), f"examples with no answer: {sorted(shown - set(listed))}"
    assert set(listed) - shown == set(), f"rows with no example: {sorted(set(listed) - shown)}"


def test_an_example_checked_for_parsing_only_says_why() -> None:
    for row in rows():
        if row.answer.startswith("parsing only"):
            assert len(row.answer.removeprefix("parsing only").strip(" :")) > 20, row


class Replies:
    """Every reply on the partition of one requester, raw, from the moment it is started."""

    def __init__(self, stack: Stack, requester: str) -> None:
        self.stack, self.requester = stack, requester
        self.raw: list[dict[str, Any]] = []
        self._consumer = AIOKafkaConsumer(
            **stack.kafka.admin.kwargs(), isolation_level="read_committed",
            enable_auto_commit=False,
        )  # fmt: skip
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Replies:
        await start_or_close(self._consumer)
        topic = self.stack.topics.replies
        tp = TopicPartition(
            topic, partition_for_key(self.requester.encode(), self.stack.partitions)
        )
        self._consumer.assign([tp])
        self._consumer.seek(tp, (await self._consumer.end_offsets([tp]))[tp])
        self._task = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        while True:
            for batch in (await self._consumer.getmany(timeout_ms=100)).values():
                self.raw.extend(json.loads(r.value) for r in batch if r.value)

    async def __aexit__(self, *_: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self._consumer.stop()


def differences(shown: dict[str, Any], got: dict[str, Any], at: str = "") -> list[str]:
    """Where a real answer differs from the guide's example of it."""
    found = []
    for name in sorted(set(shown) | set(got)):
        where = f"{at}{name}"
        if name in ENVELOPE and not at:
            continue
        if name not in got or name not in shown:
            side = "the guide only" if name in shown else "the answer only"
            found.append(f"{where}: in {side} ({shown.get(name, got.get(name))!r})")
        elif name.endswith("_at") or name in MADE_HERE:
            continue
        elif isinstance(shown[name], dict) and isinstance(got[name], dict):
            found += differences(shown[name], got[name], f"{where}.")
        elif (
            isinstance(shown[name], list)
            and isinstance(got[name], list)
            and (all(isinstance(v, dict) for v in shown[name] + got[name]))
        ):
            if len(shown[name]) != len(got[name]):
                found.append(f"{where}: {len(shown[name])} shown, {len(got[name])} answered")
            for i, (a, b) in enumerate(zip(shown[name], got[name], strict=False)):
                found += differences(a, b, f"{where}[{i}].")
        elif not same(shown[name], got[name]):
            found.append(f"{where}: the guide says {shown[name]!r}, the answer {got[name]!r}")
    return found


@pytest.fixture
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    async with running_stack(kafka, "guide", "query") as running:
        yield running


def deck_of_the_guide() -> tuple[list[Card], bytes]:
    """The deck and salt of the guide's round r-1001-1 (its history reply), so that the round
    the services play is the one the guide shows, commitment included."""
    _, reply = next(v for k, v in examples().items() if k.endswith("@reply.history.v2"))
    [shown] = reply["rounds"]
    return [Card.parse(card) for card in shown["deck"]], bytes.fromhex(shown["salt"])


async def send(stack: Stack, line: str, body: dict[str, Any]) -> None:
    role = ROLE[body["type"].split(".")[0]]
    key = body["table_id"] if role == "admin" else body["player_id"]
    # The admin principal writes holdem.admin; the operator the commands and queries.
    producer = stack._forger if role == "admin" else stack._producer
    assert producer is not None
    await producer.send_and_wait(getattr(stack.topics, role), line.encode(), key=key.encode())


def first(stack: Stack, kind: str, **match: str) -> Any:
    """The first record of type ``kind`` whose message has these field values."""
    assert stack.observer is not None
    return next(
        (r for r in stack.observer.records
         if r.message is not None and r.message.type == kind
         and all(getattr(r.message, name, None) == value for name, value in match.items())),
        None,
    )  # fmt: skip


async def test_every_example_of_the_guide_gets_the_answer_the_guide_documents(
    stack: Stack,
) -> None:
    shown = examples()
    deck, salt = deck_of_the_guide()
    wrong: list[str] = []
    async with Replies(stack, "backoffice-1") as replies:
        for row in rows():
            key = by_key(row)
            line, body = shown[key]
            role = ROLE[body["type"].split(".")[0]]
            parse(role, line.encode())  # every example is a record its topic reads
            if row.answer.startswith("parsing only"):
                continue
            if role == "replies":  # compared with the real reply at its query's row
                assert re.fullmatch(r"the answer to `q-\d+`", row.answer), row
                continue
            if role not in INPUTS:
                wrong += await _output(stack, body, row)
                continue
            if body["type"] in ("command.place_bet", "command.rebet", "command.play_free_hand"):
                stack.decks.push(deck, salt)  # every round of the guide is dealt its deck
            await send(stack, line, body)
            if role == "queries":
                wrong += await _reply(stack, replies, line, body, row, shown)
            else:
                wrong += await _answer(stack, body, row)
    assert not wrong, "the guide and the services differ:\n" + "\n".join(wrong)


async def _answer(stack: Stack, body: dict[str, Any], row: Row) -> list[str]:
    """The event the row names, caused by the example, with the row's figures."""
    kind = re.match(r"`([a-z_.]+)`", row.answer)
    assert kind, f"{row.example}: the answer names no event type"
    what = f"{kind[1]} caused by {row.example}"
    try:
        found = await stack.wait_for(
            lambda: first(stack, kind[1], causation_id=body["event_id"]), what
        )
    except AssertionError:
        others = [r.message.type for r in stack.observer.records
                  if r.message is not None
                  and getattr(r.message, "causation_id", None) == body["event_id"]]  # fmt: skip
        return [f"{row.example}: no {kind[1]} (answered {others})"]
    answer = json.loads(found.raw)
    stated = figures(row.answer)
    wrong = [f"{row.example}: {name}: the guide says {value!r}, the answer {answer.get(name)!r}"
             for name, value in stated.items() if answer.get(name) != value]  # fmt: skip
    if body["type"] in ("command.place_bet", "command.rebet", "command.play_free_hand"):
        # the round's own deal, before the guide's next step (a Call needs its round dealt)
        await stack.wait_for(
            lambda: first(stack, "round.dealt", round_id=body["round_id"]), "dealt"
        )
    if body["type"] == "command.call":
        await stack.wait_for(
            lambda: first(stack, "round.closed", round_id=body["round_id"]), "closed"
        )
    return wrong


async def _output(stack: Stack, body: dict[str, Any], row: Row) -> list[str]:
    """An output example the guide shows: the one the services wrote for its round."""
    found = await stack.wait_for(
        lambda: first(stack, body["type"], round_id=body["round_id"]),
        f"{body['type']} of the guide",
    )
    answer = json.loads(found.raw)
    return [f"{row.example}: {d}" for d in differences(body, answer) if "causation_id" not in d]


async def _reply(
    stack: Stack,
    replies: Replies,
    line: str,
    body: dict[str, Any],
    row: Row,
    shown: dict[str, tuple[str, dict[str, Any]]],
) -> list[str]:
    """Ask again until the reply is the guide's (the service folds what it reads
    asynchronously); the differences of the last reply if it never is."""
    name = re.match(r"`([^`]+)`", row.answer)
    assert name, f"{row.example}: the answer names no reply example"
    [expected] = [b for k, (_, b) in shown.items() if k.startswith(f"{name[1]}@reply.")]
    deadline = time.monotonic() + WAIT_S
    seen = 0
    last: list[str] = ["no reply"]
    while time.monotonic() < deadline:
        mine = [r for r in replies.raw[seen:] if r.get("correlation_id") == body["correlation_id"]]
        seen = len(replies.raw) if mine else seen
        if mine:
            last = differences(expected, mine[-1])
            if not last:
                return []
            await asyncio.sleep(0.3)
            await send(stack, line, body)
        await asyncio.sleep(0.05)
    return [f"{row.example} -> {name[1]}: {d}" for d in last]
