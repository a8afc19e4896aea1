"""Reconciliation: our money movements beside an operator's list of them (CSV), every
difference printed. The operator's CSV has a header with at least ``tx_id``, ``player_id``,
``kind``, ``amount`` and ``currency`` (``round_id`` optional); amounts in minor units."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REQUIRED = ("tx_id", "player_id", "kind", "amount", "currency")
COMPARED = ("kind", "amount", "currency", "round_id")


class ReconcileInputError(ValueError):
    """The operator's file is not a list of movements we can read."""


def read_operator_csv(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    """The operator's file, read; any reason it cannot be is a ``ReconcileInputError``."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ReconcileInputError(f"{path}: {error.strerror or error}") from error
    return parse_operator_csv(data, str(path))


def parse_operator_csv(data: bytes, name: str) -> dict[tuple[str, str], dict[str, str]]:
    """The movements of an operator's CSV (UTF-8, a header line), keyed by (player, tx).

    >>> found = parse_operator_csv(b"tx_id,player_id,kind,amount,currency\\nt,p,stake,5,EUR", "f")
    >>> found[("p", "t")]["amount"]
    '5'
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ReconcileInputError(f"{name}: not UTF-8 text (byte {error.start})") from error
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        fields = reader.fieldnames or ()
        missing = [column for column in REQUIRED if column not in fields]
        if missing:
            raise ReconcileInputError(f"{name}: no column {', '.join(missing)} in the header")
        found: dict[tuple[str, str], dict[str, str]] = {}
        for row in reader:
            line = reader.line_num
            if any(row.get(column) is None for column in REQUIRED):
                raise ReconcileInputError(f"{name}:{line}: fewer fields than the header")
            key = (row["player_id"], row["tx_id"])
            if key in found:
                raise ReconcileInputError(
                    f"{name}:{line}: transaction {'/'.join(key)} listed twice"
                )
            if not row["amount"].strip().isdigit():
                raise ReconcileInputError(
                    f"{name}:{line}: amount {row['amount']!r} is not minor units (an integer)"
                )
            found[key] = row
    except csv.Error as error:
        raise ReconcileInputError(f"{name}:{reader.line_num}: {error}") from error
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


def difference_row(line: str) -> dict[str, str]:
    """One line of ``differences`` as CSV columns (ids never hold ``/`` nor ``": "``).

    >>> difference_row("p/payout:r1: amount ours 5, theirs 6")
    {'player_id': 'p', 'tx_id': 'payout:r1', 'difference': 'amount ours 5, theirs 6'}
    """
    key, _, what = line.partition(": ")
    player, _, tx = key.partition("/")
    return {"player_id": player, "tx_id": tx, "difference": what}


def _brief(row: Mapping[str, Any]) -> str:
    return f"{row.get('kind')} {row.get('amount')} {row.get('currency')}"
