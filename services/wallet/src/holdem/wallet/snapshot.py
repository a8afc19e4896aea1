"""The wallet's state as a snapshot (ADR 010): versioned JSON whose shape and checks are derived
from the state's own types (pydantic, as the contracts): a field added to ``Stake``, ``Account``,
``Evidence`` or ``Bridge`` is snapshotted and checked without a line here.

v7: the numbers of accounts, rounds and command ids it holds (``counts``), which loading checks
(ADR 032): a body that lost rows is refused, not loaded short. This release reads v7 and writes
v6 (``SNAPSHOT_WRITES``), so that a release that reads v6 only can run beside it and a rollback
to it loads what this one wrote; the next release writes v7.
v6: player protection (ADR 028): limits, blocks, the day's totals, the sessions as the wallet
sees them. v5: the promotion account and the free-hand campaigns, a stake's campaign (ADR 029).
v4: records (the seamless requests, a round's reveal) nested, stakes and accounts as rows of
their fields. v6, v5, v4 and v3 still load, read as the v7 document they would be
(``_v6_as_v7``: counted; ``_v5_as_v6``: nothing was limited or blocked before v6;
``_v4_as_v5``, ``_v3_as_v4``); older and newer ones are refused, so the state is rebuilt by a
full replay (the rebets need the bets of the window)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import orjson
from pydantic import AwareDatetime, Field, NonNegativeInt, TypeAdapter

from holdem.core.contracts.protection import Limits
from holdem.core.snapshot_codec import (
    SnapshotError,
    decoding,
    items,
    load_versioned,
    mapping,
    named,
    record,
    row,
)
from holdem.wallet.protection_state import Day, Play, Protection
from holdem.wallet.seamless_state import CLOSED, Bridge, Bridges
from holdem.wallet.state import (
    Account,
    AccountKey,
    Campaign,
    Evidence,
    HouseKey,
    PlayerKey,
    Stake,
    State,
)

if TYPE_CHECKING:
    AccountRow = Account
    StakeRow = Stake
    CampaignRow = Campaign
else:  # written as rows: there are as many as rounds and accounts
    AccountRow = row(Account)
    StakeRow = row(Stake)
    CampaignRow = row(Campaign)

SNAPSHOT_VERSION: Final = 7  # the newest this release reads
SNAPSHOT_WRITES: Final = 6  # what it writes (ADR 032)
SERVICE: Final = "wallet"
__all__ = ["SNAPSHOT_VERSION", "SNAPSHOT_WRITES", "SnapshotError", "dump_state", "load_state"]


@dataclass(frozen=True, slots=True)
class ProtectionBody:
    """``Protection`` with its tuple-keyed maps as rows; ``of_round`` is recounted from the
    plays' rounds."""

    limits: list[tuple[tuple[str, str], Limits]] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)
    days: list[tuple[tuple[str, str], Day]] = field(default_factory=list)
    plays: list[tuple[tuple[str, str], Play]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Body:
    """A snapshot: the state's fields, maps keyed by tuples written as rows. ``commands`` is
    written within ``answered`` (command_id, time of the answer, fingerprint); the bridges'
    open and pending sets are recounted from their status."""

    service: Literal["wallet"]
    version: Annotated[int, Field(strict=True, ge=7, le=7)]  # a Literal[7] would take 7.0
    accounts: list[tuple[AccountKey, AccountRow]]
    house: list[tuple[HouseKey, int]]  # the house's balance may be negative
    rounds: dict[str, StakeRow]
    open_rounds: dict[str, str]
    evidence: list[tuple[PlayerKey, Evidence]]
    closed: dict[str, list[str]]
    answered: dict[str, list[tuple[str, AwareDatetime, str]]]
    applied: dict[str, list[str]]
    horizon: dict[str, AwareDatetime]
    bridges: dict[str, Bridge]
    bridges_closed: dict[str, list[str]]
    rebets: dict[str, dict[str, tuple[NonNegativeInt, NonNegativeInt]]]
    promo: list[tuple[HouseKey, int]]  # what promotions paid, net: never above 0 (v5)
    campaigns: dict[str, dict[str, CampaignRow]]  # v5
    protection: ProtectionBody  # v6
    counts: Counts  # v7


@dataclass(frozen=True, slots=True)
class Counts:
    """How many of its most numerous rows a body holds (v7)."""

    accounts: NonNegativeInt
    rounds: NonNegativeInt
    commands: NonNegativeInt

    @staticmethod
    def of(document: dict[str, Any]) -> dict[str, int]:
        """The counts of a body's JSON document (of any version since v4)."""
        answered = mapping(document["answered"]).values()
        return {
            "accounts": len(items(document["accounts"])),
            "rounds": len(mapping(document["rounds"])),
            "commands": sum(len(items(seen)) for seen in answered),
        }


BODY: Final = TypeAdapter(Body)


def dump_state(state: State, version: int = SNAPSHOT_WRITES) -> bytes:
    """The snapshot of ``state`` as a v``version`` body (v6 or v7): ``load_state`` gives back
    an equal state."""
    if version not in (6, 7):
        raise ValueError(f"the wallet writes v6 or v7 snapshots, not v{version}")
    # Grouped, then each player's keys sorted: the same document as sorting the (player, key)
    # pairs, in a quarter of the time (comparing tuples was half of a dump's CPU).
    grouped: dict[str, list[str]] = {}
    for player_id, key in state.applied:
        grouped.setdefault(player_id, []).append(key)
    for keys in grouped.values():
        keys.sort()
    applied = dict(sorted(grouped.items()))
    body = Body(
        service=SERVICE,
        version=SNAPSHOT_VERSION,
        counts=Counts(len(state.accounts), len(state.rounds), len(state.commands)),
        accounts=list(state.accounts.items()),
        house=list(state.house.items()),
        rounds=state.rounds,
        open_rounds=state.open_rounds,
        evidence=list(state.evidence.items()),
        closed=state.closed,
        answered={
            player: [
                (command_id, at, state.commands[(player, command_id)]) for command_id, at in seen
            ]
            for player, seen in state.answered.items()
        },
        applied=applied,
        horizon=state.horizon,
        bridges=state.bridges.rounds,
        bridges_closed=state.bridges.closed,
        rebets=state.rebets,
        protection=ProtectionBody(
            limits=list(state.protection.limits.items()),
            blocked=state.protection.blocked,
            days=list(state.protection.days.items()),
            plays=list(state.protection.plays.items()),
        ),
        promo=list(state.promo.items()),
        campaigns=state.campaigns,
    )
    if version == 6:
        return BODY.dump_json(body, exclude={"counts"}).replace(b'"version":7', b'"version":6', 1)
    return BODY.dump_json(body)


def load_state(raw: bytes) -> State:
    """The state ``raw`` is the snapshot of, or ``SnapshotError`` saying what is wrong with it."""
    return decoding(
        SERVICE, lambda: _state(load_versioned(BODY, raw, SERVICE, SNAPSHOT_VERSION, UPGRADES))
    )


def _state(body: Body) -> State:
    state = _fields(body)
    found = Counts(len(state.accounts), len(state.rounds), len(state.commands))
    if found != body.counts:
        raise SnapshotError(f"the body holds {found}, its counts say {body.counts}")
    return state


def _fields(body: Body) -> State:
    state = State(
        accounts=dict(body.accounts),
        house=dict(body.house),
        rounds=body.rounds,
        open_rounds=body.open_rounds,
        evidence=dict(body.evidence),
        closed=body.closed,
        horizon=body.horizon,
        bridges=_bridges(body.bridges, body.bridges_closed),
        rebets=body.rebets,
        protection=_protection(body.protection),
        promo=dict(body.promo),
        campaigns=body.campaigns,
    )
    for campaigns in body.campaigns.values():
        for campaign_id, campaign in campaigns.items():
            if campaign.campaign_id != campaign_id:
                raise SnapshotError(f"campaign {campaign_id} holds {campaign.campaign_id}")
    for player_id, seen in body.answered.items():
        state.answered[player_id] = [(command_id, at) for command_id, at, _ in seen]
        state.commands.update(((player_id, command_id), digest) for command_id, _, digest in seen)
    for player_id, keys in body.applied.items():
        state.applied.update((player_id, key) for key in keys)
    return state


def _protection(body: ProtectionBody) -> Protection:
    protection = Protection(
        limits=dict(body.limits),
        blocked=body.blocked,
        days=dict(body.days),
        plays=dict(body.plays),
    )
    for key, play in protection.plays.items():
        protection.of_round.update(dict.fromkeys(play.moving, key))
    return protection


def _bridges(rounds: dict[str, Bridge], closed: dict[str, list[str]]) -> Bridges:
    bridges = Bridges(rounds=rounds, closed=closed)
    for round_id, bridge in rounds.items():
        if bridge.round_id != round_id:
            raise SnapshotError(f"bridge {round_id} holds the debit of {bridge.round_id}")
        if bridge.status not in CLOSED:
            bridges.open.add(round_id)
        if bridge.status == "debit_pending":
            bridges.pending[bridge.player_id] = round_id
    return bridges


# --- older versions ---------------------------------------------------------------------------


def _v3_as_v4(document: dict[str, Any]) -> dict[str, Any]:
    """A v3 document as the v4 one it would be: accounts and house keyed by their tuples, the
    evidence and bridges as objects, records' wire text as the records, rebets by table (the v6
    checks then judge every field)."""
    bridges = mapping(document["bridges"])
    v4 = {
        **document,
        "version": 4,
        "accounts": [[line[:3], line[3:]] for line in _rows(document["accounts"], 5)],
        "house": [[line[:2], line[2]] for line in _rows(document["house"], 3)],
        "evidence": [
            [line[:2], named(items(line[2], 3), ("commitment", "reveal", "unverifiable"))]
            for line in _rows(document["evidence"], 3)
        ],
        "bridges": {
            round_id: named(items(b, 5), ("debit", "status", "debit_applied", "request", "sent_at"))
            for round_id, b in mapping(bridges["rounds"]).items()
        },
        "bridges_closed": bridges["closed"],
        "rebets": {
            player: {line[0]: line[1:] for line in _rows(tables, 3)}
            for player, tables in mapping(document["rebets"]).items()
        },
    }
    for _, evidence in v4["evidence"]:
        evidence["reveal"] = record(evidence["reveal"])
    for bridge in v4["bridges"].values():
        bridge["debit"], bridge["request"] = record(bridge["debit"]), record(bridge["request"])
    return v4


def _v4_as_v5(document: dict[str, Any]) -> dict[str, Any]:
    """A v4 document as the v5 one it would be: no promotion money, no campaigns, and every
    stake one its player paid (a stake row gains its campaign, none)."""
    return {
        **document,
        "version": 5,
        "rounds": {
            round_id: [*items(stake, 9), None]
            for round_id, stake in mapping(document["rounds"]).items()
        },
        "promo": [],
        "campaigns": {},
    }


def _v5_as_v6(document: dict[str, Any]) -> dict[str, Any]:
    """A v5 document as the v6 one it would be: no protection yet (nothing limited, nobody
    blocked, no day or session counted)."""
    empty: dict[str, Any] = {"limits": [], "blocked": {}, "days": [], "plays": []}
    return {**document, "version": 6, "protection": empty}


def _v6_as_v7(document: dict[str, Any]) -> dict[str, Any]:
    """A v6 document as the v7 one it would be: counted as it is."""
    return {**document, "version": 7, "counts": Counts.of(document)}


def _rows(value: Any, size: int) -> list[list[Any]]:
    return [items(line, size) for line in items(value)]


def _upgrade(*steps: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Any], bytes]:
    def upgraded(document: dict[str, Any]) -> bytes:
        for step in steps:
            document = step(document)
        return orjson.dumps(document)

    return upgraded


# older versions, read as the current one they would be
UPGRADES: Final = {
    3: _upgrade(_v3_as_v4, _v4_as_v5, _v5_as_v6, _v6_as_v7),
    4: _upgrade(_v4_as_v5, _v5_as_v6, _v6_as_v7),
    5: _upgrade(_v5_as_v6, _v6_as_v7),
    6: _upgrade(_v6_as_v7),
}
