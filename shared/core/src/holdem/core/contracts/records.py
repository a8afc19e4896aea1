"""What a pipeline needs of the contracts without naming a game event: parse and dump a record
of a topic role, each role's union (the AsyncAPI documents) and the command types (who answers
a command it cannot read). The runtime imports only this, ``base`` and ``rejected`` of the
contracts (import-linter: "The runtime imports no contract of the game's events")."""

from __future__ import annotations

from holdem.core.contracts import (
    ADMIN_TYPES,
    COMMAND_TYPES,
    UNIONS,
    ContractError,
    dump,
    parse,
    written_as_is,
)

__all__ = [
    "ADMIN_TYPES",
    "COMMAND_TYPES",
    "UNIONS",
    "ContractError",
    "dump",
    "parse",
    "written_as_is",
]
