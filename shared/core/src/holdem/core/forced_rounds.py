"""``holdem settle``: the certification harness that settles forced rounds read as JSON lines."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, BinaryIO, ClassVar, Final, TextIO

from holdem.core.cards import RANK_CHARS, SUIT_CHARS, Card
from holdem.core.errors import RoundError, UnknownCardError
from holdem.core.rules import RoundOutcome, settle

REQUIRED: Final = ("player", "dealer", "board", "ante", "decision")
OPTIONAL: Final[Mapping[str, int]] = {"aa_bonus": 0}  # the AA Bonus is an optional side bet
CARD_FIELDS: Final = ("player", "dealer", "board")
# Every spelling Card.parse accepts (rank and suit in either case), to its code: one dict lookup.
CODES: Final[Mapping[str, int]] = {
    rank + suit: int(Card.parse(rank + suit))
    for rank in RANK_CHARS + RANK_CHARS.lower()
    for suit in SUIT_CHARS + SUIT_CHARS.upper()
}

USAGE: Final = """\
Reads one round per line: {"player": ["As","Kd"], "dealer": ["7c","7d"], "board": [5 cards],
"ante": 10, "aa_bonus": 5, "decision": "call"|"fold"}; aa_bonus defaults to 0, other fields are
copied through. Writes each line back with an "outcome" object, or {"line", "error", "input"}
for a line that cannot be settled. Blank lines are skipped. Exit status: 0 if every line
settled, 1 if any line was an error, 2 for a usage error."""


class NotAnObjectError(RoundError):
    """A line that is JSON but not an object."""

    code: ClassVar[str] = "not_an_object"


class MissingFieldError(RoundError):
    """A round object without one of the required fields."""

    code: ClassVar[str] = "missing_field"


class CardListError(RoundError):
    """A card field that is not a list of card texts."""

    code: ClassVar[str] = "invalid_cards"


@dataclass(slots=True)
class Summary:
    """What one run did, for the closing line on stderr."""

    lines: int = 0
    settled: int = 0
    errors: int = 0


def settle_line(text: str | bytes, number: int) -> tuple[dict[str, Any], bool]:
    """The output object for one input line, and True if it settled (False for an error line).

    >>> out, ok = settle_line('{"player":["As","Ad"],"dealer":["7c","2d"],'
    ...     '"board":["Ah","Ks","9d","4c","3h"],"ante":10,"decision":"fold","id":7}', 1)
    >>> ok, out["id"], out["outcome"]["result"], out["outcome"]["total_return"]
    (True, 7, 'fold', 0)
    >>> settle_line('{"player": ["As"]}', 2)[0]["error"]["code"]
    'missing_field'
    """
    data: Any = text
    try:
        data = json.loads(text)
        outcome = settle_object(data)
    except RoundError as error:
        return _error_line(number, error.code, str(error), data), False
    except ValueError as error:  # JSON syntax, or bytes that are not UTF-8
        return _error_line(number, "invalid_json", str(error), data), False
    return {**data, "outcome": outcome.to_wire()}, True


def settle_object(data: object) -> RoundOutcome:
    """Settle one decoded round object; raise the ``RoundError`` naming its first problem."""
    if not isinstance(data, dict):
        raise NotAnObjectError(f"a round must be a JSON object, got {type(data).__name__}")
    missing = [name for name in REQUIRED if name not in data]
    if missing:
        raise MissingFieldError(f"missing field(s): {', '.join(missing)}")
    player, dealer, board = (parse_card_list(name, data[name]) for name in CARD_FIELDS)
    aa_bonus = data.get("aa_bonus", OPTIONAL["aa_bonus"])
    return settle(player, dealer, board, data["ante"], aa_bonus, data["decision"])


def parse_card_list(name: str, value: object) -> tuple[int, ...]:
    """Card codes from a JSON list of card texts like ``["As", "Kd"]``, read as Card.parse does."""
    if not isinstance(value, list):
        raise CardListError(f'{name} must be a list of cards like ["As", "Kd"], got {value!r}')
    try:
        return tuple(CODES[text] for text in value)
    except (KeyError, TypeError):
        bad = next(text for text in value if not isinstance(text, str) or text not in CODES)
        raise UnknownCardError(f'{name}: not a card: {bad!r} (expected e.g. "As", "Td")') from None


def _error_line(number: int, code: str, message: str, data: object) -> dict[str, Any]:
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    if isinstance(data, str):
        data = data.rstrip("\r\n")
    return {"line": number, "error": {"code": code, "message": message}, "input": data}


def run(lines: Iterable[bytes | str], write: Callable[[str], object]) -> Summary:
    """Settle every non-blank line, writing one JSON line per round; count what happened."""
    summary = Summary()
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        out, ok = settle_line(line, number)
        write(dumps(out) + "\n")
        summary.lines += 1
        summary.settled += ok
        summary.errors += not ok
    return summary


def main(argv: list[str] | None = None) -> int:
    """Run ``holdem settle [INPUT] [--output FILE]``; return the exit status."""
    parser = argparse.ArgumentParser(prog="holdem settle", description=USAGE)
    parser.add_argument("input", nargs="?", default="-", help="JSON-lines file; - for stdin")
    parser.add_argument("-o", "--output", default="-", help="output file; - for stdout")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        with ExitStack() as stack:
            source = _open_input(args.input, stack)
            target = _open_output(args.output, stack)
            summary = run(source, target.write)
    except OSError as error:
        print(f"holdem settle: {error}", file=sys.stderr)
        return 2
    if not args.quiet:
        _report(summary, time.perf_counter() - started)
    return 0 if summary.errors == 0 else 1


def _open_input(path: str, stack: ExitStack) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    return stack.enter_context(open(path, "rb"))


def _open_output(path: str, stack: ExitStack) -> TextIO:
    if path == "-":
        return sys.stdout
    return stack.enter_context(open(path, "w", encoding="utf-8", buffering=1 << 20))


def _report(summary: Summary, seconds: float) -> None:
    rate = summary.lines / seconds if seconds > 0 else 0.0
    print(
        f"holdem settle: {summary.lines} rounds, {summary.settled} settled, "
        f"{summary.errors} errors, {seconds:.2f} s ({rate:,.0f} lines/s)",
        file=sys.stderr,
    )
