"""The ``holdem`` command: one entry point, one module per subcommand, imported only when used."""

from __future__ import annotations

import importlib
import sys

# subcommand -> (module with ``main(argv) -> int``, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "settle": (
        "holdem.core.harness",
        "settle forced rounds from JSON lines (certification harness)",
    ),
    "rtp": ("holdem.math.rtp", "exact return to player by full enumeration (holdem-math)"),
    "ev": (
        "holdem.math.rtp",
        "exact EV of calling for a hole and flop, e.g. `holdem ev AsKd 2c7h9s`",
    ),
    "certify": (
        "holdem.core.manifest",
        "write the certification pack (manifest, exact RTP sheet); `certify verify MANIFEST`",
    ),
    "sim": ("holdem.math.sim", "simulate rounds and report RTP with a 95% CI (holdem-math)"),
    # In holdem-client[play], found at run time: the core does not depend on the SDK.
    "play": ("holdem.client.play", "sit at the table in this terminal (needs holdem-client[play])"),
    # In holdem-client, like play: answered by the query service over Kafka.
    "history": ("holdem.client.history", "a player's last rounds, localized (query service)"),
    "round": ("holdem.client.history", "one finished round, localized (query service)"),
    "end-session": ("holdem.client.sessions", "end a player's session at a table (the dealer)"),
    # In holdem-harness: every topic of a deployment against the invariants, exit 1 on a violation
    "audit": ("holdem.harness.audit_cli", "audit a deployment's topics (needs holdem-harness)"),
    # the lab (holdem-lab) is imported only here, by name: the core never imports it statically
    "rng-report": (
        "holdem.lab.rng.cli",
        "draw decks through the dealer's shuffle and write the statistical RNG report",
    ),
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"} or args[0] not in COMMANDS:
        print("usage: holdem <command> [options]\n\ncommands:")
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:10} {text}")
        return 0 if args and args[0] in {"-h", "--help"} else 2
    try:
        module = importlib.import_module(COMMANDS[args[0]][0])
    except ModuleNotFoundError as missing:
        print(f"holdem {args[0]}: {missing.name} is not installed ({COMMANDS[args[0]][1]})")
        return 2
    entry = getattr(module, f"{args[0].replace('-', '_')}_main", None) or module.main
    result: int = entry(args[1:])
    return result


if __name__ == "__main__":
    sys.exit(main())
