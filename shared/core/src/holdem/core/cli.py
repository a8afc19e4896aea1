"""The ``holdem`` command: each package brings its own subcommands as entry points.

A package declares ``[project.entry-points."holdem.subcommands"]`` in its pyproject, one
``name = "module:function"`` per subcommand, the function taking ``argv`` and returning the exit
code. The core knows none of them by name: what is installed is what ``holdem --help`` lists
(with the package it comes from), and a subcommand's module is imported only when it runs, so
the core never loads the math, the SDK, the harness or the lab unless asked.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from holdem.core import heap

GROUP = "holdem.subcommands"


def subcommands() -> dict[str, EntryPoint]:
    """Every installed subcommand by name, sorted (the first package wins a clash)."""
    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=GROUP):
        found.setdefault(entry.name, entry)
    return dict(sorted(found.items()))


def usage(commands: dict[str, EntryPoint]) -> str:
    lines = ["usage: holdem <command> [options]   (holdem <command> --help for its own)", ""]
    lines.append("commands (from the installed packages):")
    for name, entry in commands.items():
        package = entry.dist.name if entry.dist is not None else "?"
        lines.append(f"  {name:12} {package}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    commands = subcommands()
    if not args or args[0] in {"-h", "--help"}:
        print(usage(commands))
        return 0 if args else 2
    if args[0] not in commands:
        print(f"holdem: no command {args[0]!r} among the installed packages\n")
        print(usage(commands))
        return 2
    entry = commands[args[0]]
    try:
        run: Callable[[list[str]], int] = entry.load()
    except ModuleNotFoundError as missing:  # an optional extra, e.g. holdem-client[play]
        print(f"holdem {args[0]}: {missing.name} is not installed (needed by {entry.value})")
        return 2
    if argv is None:  # `holdem NAME` as its own process: a batch job (an audit, the PAR sheet)
        heap.tune()
    return run(args[1:])


if __name__ == "__main__":
    sys.exit(main())
