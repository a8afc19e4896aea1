"""What a seamless-mode wallet remembers of its transactions with the operator's wallet (ADR 015):
one ``Bridge`` per round, folded from its own requests and from its records of the answers."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

from pydantic import AwareDatetime

from holdem.core.contracts import Message, WalletRejected
from holdem.core.contracts.seamless import (
    CreditRequested,
    DebitRequested,
    RollbackRequested,
    SeamlessCredited,
    SeamlessDebited,
    SeamlessRolledBack,
)

# Closed bridges kept per player (duplicate answers to them are recognised and stay silent),
# and the most rounds a player may have waiting on the operator's acknowledgement of a credit
# or rollback before his next bet is refused: both bound the state (ADR 010).
BRIDGES_KEPT: Final = 256
OUTSTANDING_MAX: Final = 16
MOVE_KEYS: Final = ("seamless_debited", "seamless_credited", "seamless_rolled_back")

Status = Literal[
    "debit_pending",  # DebitRequested, no answer yet
    "debited",  # the operator took the stakes: the round is on
    "refused",  # the operator refused the debit: no round
    "crediting",  # CreditRequested, not yet acknowledged
    "rolling_back",  # RollbackRequested, not yet acknowledged
    "credited",
    "rolled_back",
]
CLOSED: Final = frozenset({"refused", "credited", "rolled_back"})
TxKind = Literal["debit", "credit", "rollback", "close"]  # close: the round-closed notice
_TX = uuid.UUID("5b0f3c1e-8d2a-4f67-b1c9-2e7a9d04f6b3")


def tx_id(player_id: str, round_id: str, kind: TxKind) -> str:
    """The stable id of a round's debit, credit or rollback (the same on every send).

    >>> tx_id("p1", "r1", "debit") == tx_id("p1", "r1", "debit") != tx_id("p1", "r1", "credit")
    True
    """
    return str(uuid.uuid5(_TX, f"{player_id}/{round_id}/{kind}"))


@dataclass(slots=True)
class Bridge:
    """One round's transactions with the operator's wallet."""

    debit: DebitRequested  # also the bet behind it, placed as admitted once debited
    status: Status = "debit_pending"
    debit_applied: bool = False  # a SeamlessDebited put the stakes in the ledger
    request: CreditRequested | RollbackRequested | None = None  # outstanding, re-sent until done
    sent_at: AwareDatetime | None = None  # the last send of ``request``

    @property
    def player_id(self) -> str:
        return self.debit.player_id

    @property
    def round_id(self) -> str:
        return self.debit.round_id


Request: TypeAlias = CreditRequested | RollbackRequested


@dataclass(slots=True)
class Bridges:
    """Every bridge not yet forgotten, by round_id; the open ones (a tick looks at those only);
    each player's debit awaiting an answer; the order in which each player's bridges closed."""

    rounds: dict[str, Bridge] = field(default_factory=dict)
    open: set[str] = field(default_factory=set)
    pending: dict[str, str] = field(default_factory=dict)  # player_id -> round of his debit
    closed: dict[str, list[str]] = field(default_factory=dict)

    def of(self, player_id: str, round_id: str | None) -> Bridge | None:
        found = self.rounds.get(round_id) if round_id is not None else None
        return found if found is not None and found.player_id == player_id else None

    def outstanding(self, player_id: str) -> int:
        """The player's rounds whose credit or rollback the operator has not acknowledged."""
        return sum(
            1
            for round_id in self.open
            if (b := self.rounds[round_id]).player_id == player_id
            and b.status in {"crediting", "rolling_back"}
        )


def fold_bridge(bridges: Bridges, event: Message) -> list[tuple[str, str]]:
    """Fold one of the wallet's own records into ``bridges``; returns the (player, key) pairs
    of the idempotency keys to forget with the bridges that went (bounded state)."""
    if isinstance(event, DebitRequested):
        if event.round_id not in bridges.rounds:
            bridges.rounds[event.round_id] = Bridge(event)
            bridges.open.add(event.round_id)
            bridges.pending[event.player_id] = event.round_id
        return []
    bridge = bridges.of(event.player_id, event.round_id)
    if bridge is None or bridge.status in CLOSED:
        return []
    if isinstance(event, SeamlessDebited) and bridge.status == "debit_pending":
        bridge.status, bridge.debit_applied = "debited", True
    elif isinstance(event, WalletRejected) and bridge.status == "debit_pending":
        bridge.status = "refused"
    elif isinstance(event, CreditRequested | RollbackRequested):
        bridge.status = "crediting" if isinstance(event, CreditRequested) else "rolling_back"
        bridge.request, bridge.sent_at = event, event.occurred_at
    elif isinstance(event, SeamlessCredited) and bridge.status == "crediting":
        bridge.status = "credited"
    elif isinstance(event, SeamlessRolledBack) and bridge.status == "rolling_back":
        bridge.status = "rolled_back"
    if (
        bridge.status != "debit_pending"
        and bridges.pending.get(bridge.player_id) == bridge.round_id
    ):
        del bridges.pending[bridge.player_id]
    return _close(bridges, bridge) if bridge.status in CLOSED else []


def _close(bridges: Bridges, bridge: Bridge) -> list[tuple[str, str]]:
    bridges.open.discard(bridge.round_id)
    order = bridges.closed.setdefault(bridge.player_id, [])
    order.append(bridge.round_id)
    if len(order) <= BRIDGES_KEPT:
        return []
    old = order.pop(0)
    bridges.rounds.pop(old, None)
    return [(bridge.player_id, f"{kind}:{old}") for kind in MOVE_KEYS]
