"""Table test vocabulary: terms and the admin's commands, and PlaceBet v2 / Rebet builders."""

from __future__ import annotations

import uuid
from typing import Any

from holdem.core.contracts import (
    ChangeTable,
    CloseTable,
    CreateTable,
    PlaceBet,
    Rebet,
    TableTerms,
    TimeoutPolicy,
)
from support.deciders import NOW

TERMS = TableTerms(
    operator_id="op-1",
    currency="EUR",
    ante_min=100,
    ante_max=10_000,
    bonus_max=5_000,
    chips=(100, 500, 2_500),
    decision_timeout_s=20,
    timeout_policy=TimeoutPolicy.CALL,
)


def terms(**changes: Any) -> TableTerms:
    """TERMS with ``changes``, validated."""
    return TableTerms.model_validate({**TERMS.model_dump(), **changes})


def _admin(model: type[Any], table_id: str, command_id: str | None, **fields: Any) -> Any:
    return model(
        event_id=uuid.uuid4().hex,
        command_id=command_id or uuid.uuid4().hex,
        table_id=table_id,
        occurred_at=NOW,
        **fields,
    )


def create_table(table_id: str = "t1", command_id: str | None = None, **kw: Any) -> CreateTable:
    return _admin(CreateTable, table_id, command_id, terms=kw.pop("terms", TERMS), **kw)  # type: ignore[no-any-return]


def change_table(
    expected: int, table_id: str = "t1", command_id: str | None = None, **changes: Any
) -> ChangeTable:
    return _admin(  # type: ignore[no-any-return]
        ChangeTable, table_id, command_id, expected_version=expected, terms=terms(**changes)
    )


def close_table(expected: int, table_id: str = "t1", command_id: str | None = None) -> CloseTable:
    return _admin(CloseTable, table_id, command_id, expected_version=expected)  # type: ignore[no-any-return]


def bet_at(
    table_id: str, round_id: str, ante: int, aa_bonus: int = 0, player_id: str = "p1", **kw: Any
) -> PlaceBet:
    kw.setdefault("currency", "EUR")
    return PlaceBet(
        event_id=uuid.uuid4().hex,
        command_id=kw.pop("command_id", None) or uuid.uuid4().hex,
        player_id=player_id,
        occurred_at=NOW,
        version=2,
        table_id=table_id,
        round_id=round_id,
        ante=ante,
        aa_bonus=aa_bonus,
        **kw,
    )


def rebet(table_id: str, round_id: str, player_id: str = "p1") -> Rebet:
    return Rebet(
        event_id=uuid.uuid4().hex,
        command_id=uuid.uuid4().hex,
        player_id=player_id,
        occurred_at=NOW,
        round_id=round_id,
        table_id=table_id,
    )


def table_event(model: type[Any], version: int, table_id: str = "t1", **changes: Any) -> Any:
    """A table event as the wallet writes it (``changes``: of TERMS)."""
    return model(
        event_id=f"{table_id}-{version}",
        table_id=table_id,
        occurred_at=NOW,
        command_id=f"c{version}",
        fingerprint="0" * 32,
        table_version=version,
        terms=terms(**changes) if changes else TERMS,
    )
