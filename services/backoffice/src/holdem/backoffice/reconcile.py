"""Reconciliation: our money movements beside an operator's list of them (CSV), every
difference printed. The operator's CSV has a header with at least ``tx_id``, ``player_id``,
``kind``, ``amount`` and ``currency`` (``round_id`` optional); amounts in minor units."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REQUIRED = ("tx_id", "player_id", "kind", "amount", "currency")
COMPARED = ("kind", "amount", "currency", "round_id")


class ReconcileInputError(ValueError):
    """The operator's file is not a list of movements we can read."""


def read_operator_csv(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in REQUIRED if name not in (reader.fieldnames or ())]
        if missing:
            raise ReconcileInputError(f"{path}: no column {', '.join(missing)}")
        found: dict[tuple[str, str], dict[str, str]] = {}
        for line, row in enumerate(reader, 2):
            key = (row["player_id"], row["tx_id"])
            if key in found:
                raise ReconcileInputError(f"{path}:{line}: transaction {key} listed twice")
            if not row["amount"].strip().isdigit():
                raise ReconcileInputError(
                    f"{path}:{line}: amount {row['amount']!r} is not minor units"
                )
            found[key] = row
    return found


def differences(
    ours: Iterable[Mapping[str, Any]], theirs: Mapping[tuple[str, str], Mapping[str, str]]
) -> list[str]:
    """Every transaction one side has and the other has not, and every field that differs.

    >>> ours = [{"player_id": "p", "tx_id": "t1", "kind": "stake", "amount": 5, "currency": "EUR",
    ...          "round_id": "r"}]
    >>> differences(ours, {("p", "t1"): {"kind": "stake", "amount": "6", "currency": "EUR"}})
    ['p/t1: amount ours 5, theirs 6']
    """
    found = []
    mine = {(str(m["player_id"]), str(m["tx_id"])): m for m in ours}
    for key in sorted(set(mine) | set(theirs)):
        name = "/".join(key)
        if key not in theirs:
            found.append(f"{name}: missing at the operator ({_brief(mine[key])})")
            continue
        if key not in mine:
            found.append(f"{name}: the operator's, not ours ({_brief(theirs[key])})")
            continue
        for column in COMPARED:
            their = theirs[key].get(column)
            if their is None or (column == "round_id" and not their):
                continue
            our = "" if mine[key].get(column) is None else str(mine[key][column])
            if our != their.strip():
                found.append(f"{name}: {column} ours {our}, theirs {their.strip()}")
    return found


def _brief(row: Mapping[str, Any]) -> str:
    return f"{row.get('kind')} {row.get('amount')} {row.get('currency')}"
