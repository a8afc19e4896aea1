"""The query service's fold of a player's campaigns and protection (issue 29): bounded per
player, counted once, and kept by the snapshot."""

from __future__ import annotations

from datetime import timedelta

import orjson
from support.deciders import NOW

from holdem.core.contracts import (
    FreeHandsGranted,
    FreeStakeTaken,
    LimitsSet,
    Message,
    PlayerBlocked,
    SessionStarted,
)
from holdem.core.contracts.queries import CAMPAIGNS_KEPT, LIMITS_KEPT, SESSIONS_KEPT
from holdem.query.snapshot import dump_state, load_state
from holdem.query.state import COUNTED_KEPT, QueryState, evolve, initial_state

AT = {"player_id": "p1", "occurred_at": NOW}


def fold(*events: Message) -> QueryState:
    state = initial_state()
    for event in events:
        state = evolve(state, event)
    return state


def grant(n: int, hands: int = 1) -> FreeHandsGranted:
    return FreeHandsGranted(
        event_id=f"g{n}", **AT, campaign_id=f"c{n}", command_id=f"grant{n}",
        fingerprint="0" * 32, table_id="eur-low", currency="EUR", hands=hands, ante=500,
        aa_bonus=0, expires_at=NOW + timedelta(days=30),
    )  # fmt: skip


def taken(campaign: str, n: int) -> FreeStakeTaken:
    return FreeStakeTaken(
        event_id=f"t{n}", **AT, round_id=f"r{n}", idempotency_key=f"stake:r{n}",
        currency="EUR", amount=500, available=0, held=0, campaign_id=campaign, ante=500,
        aa_bonus=0,
    )  # fmt: skip


def started(n: int) -> SessionStarted:
    return SessionStarted(
        event_id=f"s{n}", **AT, session_id=f"s{n}", table_id=f"t{n}", round_id=f"r{n}",
        command_id=f"b{n}", idle_timeout_s=60,
    )  # fmt: skip


def limits(n: int) -> LimitsSet:
    currency = "".join(chr(ord("A") + (n // 26**i) % 26) for i in range(3))
    return LimitsSet(event_id=f"l{n}", **AT, command_id=f"l{n}", limits={"currency": currency})


def test_what_is_kept_per_player_is_bounded() -> None:
    # Campaigns with no hand left go first; played ones are counted (their keys bounded too).
    events: list[Message] = []
    for n in range(CAMPAIGNS_KEPT + 20):
        events += [grant(n), taken(f"c{n}", n)]
    events += [started(n) for n in range(SESSIONS_KEPT + 5)]
    events += [limits(n) for n in range(LIMITS_KEPT + 5)]
    book = fold(*events).books["p1"]
    assert len(book.campaigns) == CAMPAIGNS_KEPT and "c0" not in book.campaigns
    assert all(view.remaining == 0 for view in book.campaigns.values())
    assert len(book.counted) == COUNTED_KEPT
    assert len(book.sessions) == SESSIONS_KEPT and "t0" not in book.sessions
    assert len(book.limits) == LIMITS_KEPT


def test_a_campaign_with_hands_left_outlives_the_bound() -> None:
    events: list[Message] = [grant(0, hands=5)]
    for n in range(1, CAMPAIGNS_KEPT + 10):
        events += [grant(n), taken(f"c{n}", n)]
    book = fold(*events).books["p1"]
    assert book.campaigns["c0"].remaining == 5 and len(book.campaigns) == CAMPAIGNS_KEPT


def test_campaigns_and_protection_survive_the_snapshot_and_a_v2_snapshot_loads() -> None:
    block = PlayerBlocked(event_id="b", **AT, command_id="b", reason="self-exclusion")
    state = fold(grant(1, hands=3), taken("c1", 1), started(1), limits(1), block)
    loaded = load_state(dump_state(state))
    assert loaded == state
    assert loaded.books["p1"].blocked == ("self-exclusion", NOW)

    body = orjson.loads(dump_state(state))
    body["version"] = 2
    for key in ("campaigns", "counted", "limits", "blocked", "sessions"):
        del body["books"]["p1"][key]
    older = load_state(orjson.dumps(body)).books["p1"]
    assert (older.campaigns, older.limits, older.blocked, older.sessions) == ({}, {}, None, {})
