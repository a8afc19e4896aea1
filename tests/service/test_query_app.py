"""The query service on the in-memory transport: rounds and wallet in, one reply per query out,
keyed by the requester; refusals typed; unreadable queries dead-lettered."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.deciders import NOW
from support.memory import Log, started
from support.queries import fun, play
from support.rounds import RoundEvents

from holdem.core.contracts import (
    BalanceQuery,
    BalanceReply,
    FreeHandsCancelled,
    FreeHandsExpired,
    FreeHandsGranted,
    FreeStakeRefunded,
    FreeStakeTaken,
    HistoryQuery,
    HistoryReply,
    LimitsSet,
    Message,
    MessageRejected,
    Mode,
    OpenRoundQuery,
    OpenRoundReply,
    PlayerBlocked,
    PlayerUnblocked,
    PromoCredited,
    PromotionsQuery,
    PromotionsReply,
    ProtectionQuery,
    ProtectionReply,
    QueryReason,
    QueryRefused,
    RealityCheckAcknowledged,
    RoundSummaryQuery,
    RoundSummaryReply,
    SessionEnded,
    SessionEndReason,
    SessionStarted,
    dump,
    parse,
)
from holdem.query.app import create_app
from holdem.query.settings import QuerySettings
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.transport import TYPE_HEADER


@dataclass
class Harness:
    service: ServiceApp
    log: Log
    asked: int = 0

    @property
    def replies(self) -> list[tuple[bytes | None, Any]]:
        """(key, reply) of every record on the replies topic, in the order written."""
        return [
            (record.key, parse("replies", record.value))
            for record in self.log.records("replies")
            if record.value is not None
        ]

    @property
    def rejected(self) -> list[MessageRejected]:
        return [parse("rejected", raw) for raw in self.log.values("rejected")]

    async def feed(self, *events: Message) -> None:
        """Written together (a batch, or a few), then everything they cause committed; each
        with its type header, as our services write them (the query service filters on it)."""
        for event in events:
            topic = self.log.topic(event.TOPIC)
            kind: str = event.type  # type: ignore[attr-defined]
            await self.log.transport.publish(
                topic,
                dump(event),
                key=event.player_id.encode(),
                headers=[(TYPE_HEADER, kind.encode())],
            )
        await self.log.transport.settle()

    async def ask(self, kind: type[Any], player: str = "p1", **fields: Any) -> Any:
        self.asked += 1
        query = kind(
            event_id=f"q{self.asked}", player_id=player, occurred_at=NOW,
            correlation_id=f"c{self.asked}", requester_id="lobby-1", **fields,
        )  # fmt: skip
        before = len(self.replies)
        await self.feed(query)
        [(key, reply)] = self.replies[before:]
        assert key == b"lobby-1" and reply.correlation_id == query.correlation_id
        assert reply.requester_id == "lobby-1" and reply.player_id == player
        return reply


@pytest.fixture
async def query() -> AsyncIterator[Harness]:
    settings = QuerySettings(topic_prefix="t1", metrics_port=0, history_kept=5)
    transport = MemoryTransport()
    service = create_app(settings, transport=transport, registry=CollectorRegistry())
    async with started(service, transport) as log:
        yield Harness(service, log)


def game(n: int, **kw: Any) -> RoundEvents:
    return RoundEvents(round_id=f"r{n}", at=NOW + timedelta(minutes=n), **kw)


async def test_history_is_the_newest_real_rounds_capped_by_the_window(query: Harness) -> None:
    balance = 1_000
    for n in range(7):
        played = play(game(n), balance, ("call", "fold", "void")[n % 3])
        await query.feed(*played.interleaved)
        balance = played.after
    await query.feed(*play(fun(game(7)), 500).rounds)  # fun: never in the history
    reply = await query.ask(HistoryQuery, limit=50)
    assert isinstance(reply, HistoryReply) and reply.limit == 5
    assert [v.round_id for v in reply.rounds] == ["r6", "r5", "r4", "r3", "r2"]
    assert [v.result for v in reply.rounds] == ["win", "voided", "fold", "win", "voided"]
    assert reply.rounds[0].balance_after == balance
    newer_older = zip(reply.rounds, reply.rounds[1:], strict=False)
    assert all(new.balance_before == old.balance_after for new, old in newer_older)
    default = await query.ask(HistoryQuery)
    assert len(default.rounds) == 5


async def test_history_in_fun_mode_is_refused(query: Harness) -> None:
    await query.feed(*play(fun(game(0)), 1_000).rounds)
    reply = await query.ask(HistoryQuery, mode=Mode.FUN)
    assert isinstance(reply, QueryRefused) and reply.reason == QueryReason.FUN_NOT_KEPT
    assert reply.query_type == "query.history"


async def test_an_unknown_player_is_refused_for_every_query(query: Harness) -> None:
    for kind, fields in (
        (OpenRoundQuery, {}), (BalanceQuery, {}), (HistoryQuery, {}),
        (RoundSummaryQuery, {"round_id": "r1"}), (PromotionsQuery, {}), (ProtectionQuery, {}),
    ):  # fmt: skip
        reply = await query.ask(kind, player="nobody", **fields)
        assert isinstance(reply, QueryRefused) and reply.reason == QueryReason.UNKNOWN_PLAYER


async def test_the_open_round_shows_only_what_the_player_may_see(query: Harness) -> None:
    played = play(game(0), 1_000)
    await query.feed(*played.rounds[:2], *played.wallet[:2])
    reply = await query.ask(OpenRoundQuery)
    assert isinstance(reply, OpenRoundReply) and reply.open_round is not None
    view = reply.open_round
    assert (view.state, view.player_cards, view.flop) == ("dealt", ("As", "Ad"), ("Ah", "Ks", "9d"))
    assert view.turn is None and view.dealer_cards == () and view.deck is None
    assert "7c" not in dump(reply).decode()  # the dealer's cards are nowhere in the reply
    await query.feed(*played.rounds[2:], *played.wallet[2:])
    assert (await query.ask(OpenRoundQuery)).open_round is None


async def test_balances_are_per_currency_real_and_fun_apart(query: Harness) -> None:
    await query.feed(*play(game(0), 1_000).wallet, *play(fun(game(1)), 300, "fold").wallet)
    reply = await query.ask(BalanceQuery)
    assert isinstance(reply, BalanceReply)
    assert [(b.currency, b.mode, b.available, b.held) for b in reply.balances] == [
        ("EUR", Mode.FUN, 285, 0),
        ("EUR", Mode.REAL, 1_045, 0),
    ]


async def test_a_round_summary_in_each_language(query: Harness) -> None:
    await query.feed(*play(game(0), 1_000).interleaved)
    english = await query.ask(RoundSummaryQuery, round_id="r0")
    norsk = await query.ask(RoundSummaryQuery, round_id="r0", lang="nb")
    assert isinstance(english, RoundSummaryReply) and english.round.round_id == "r0"
    assert "Three of a kind" in english.text and "Tre like" in norsk.text


async def test_summaries_of_unknown_or_open_rounds_are_refused(query: Harness) -> None:
    played = play(game(0), 1_000)
    await query.feed(*played.rounds[:2])
    unknown = await query.ask(RoundSummaryQuery, round_id="r9")
    still_open = await query.ask(RoundSummaryQuery, round_id="r0")
    assert unknown.reason == QueryReason.UNKNOWN_ROUND
    assert still_open.reason == QueryReason.ROUND_NOT_FINISHED


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"{not json", "malformed"),
        (b'{"type": "query.everything", "event_id": "e"}', "unknown_type"),
        (
            b'{"type": "query.history", "event_id": "e", "player_id": "p1", "occurred_at": '
            b'"2026-01-01T00:00:00Z", "correlation_id": "c", "requester_id": "r", "limit": -1}',
            "invalid",
        ),
        (
            b'{"type": "query.history", "event_id": "e", "player_id": "p1", "occurred_at": '
            b'"2026-01-01T00:00:00Z", "requester_id": "r"}',
            "invalid",
        ),
    ],
)
async def test_bad_queries_are_dead_lettered_and_answer_nothing(
    query: Harness, raw: bytes, reason: str
) -> None:
    await query.log.publish("queries", raw, b"p1")
    [rejected] = query.rejected
    assert (rejected.reason.value, rejected.service) == (reason, "query")
    assert query.replies == []


async def test_a_query_under_another_players_key_is_dead_lettered(query: Harness) -> None:
    bad = OpenRoundQuery(
        event_id="e", player_id="p1", occurred_at=NOW, correlation_id="c", requester_id="r"
    )
    await query.log.publish("queries", dump(bad), b"p2")
    [rejected] = query.rejected
    assert rejected.reason.value == "key_mismatch" and query.replies == []


async def test_a_promotional_credit_is_in_the_next_balance_answer(query: Harness) -> None:
    """Issue 29 defect 2: the query service reads the promotion's money movements too."""
    await query.feed(*play(game(0), 1_000).wallet)
    credit = PromoCredited(
        event_id="w-promo", player_id="p1", occurred_at=NOW, idempotency_key="promo:1",
        currency="EUR", amount=2_500, available=3_545, held=0, campaign_id="welcome",
        reason="goodwill",
    )  # fmt: skip
    # As the wallet publishes it: with its type header, which the service filters on.
    topic = query.log.topic("wallet")
    await query.log.transport.publish(
        topic, dump(credit), key=b"p1", headers=[(TYPE_HEADER, credit.type.encode())]
    )
    await query.log.transport.settle()
    reply = await query.ask(BalanceQuery)
    assert isinstance(reply, BalanceReply)
    assert [(b.currency, b.mode, b.available, b.held) for b in reply.balances] == [
        ("EUR", Mode.REAL, 3_545, 0)
    ]


async def test_the_open_round_leaves_out_what_is_not_known_and_names_its_pay_table(
    query: Harness,
) -> None:
    """Issue 29 defect 6: a dealt round's reply carries no balance_after (its money is not
    final), the pay table its bet was placed under, and no null or empty field."""
    game0 = game(0)
    played = play(game0, 1_000)
    at_table = game0.bet_placed(table_id="eur-low", table_version=1, pay_table="standard-1")
    await query.feed(at_table, played.rounds[1], *played.wallet[:2])
    before = len(query.replies)
    reply = await query.ask(OpenRoundQuery)
    assert isinstance(reply, OpenRoundReply) and reply.open_round is not None
    [record] = query.log.records("replies")[before:]
    assert record.value is not None
    shown = json.loads(record.value)["open_round"]

    assert shown["state"] == "dealt" and shown["pay_table"] == "standard-1"
    assert shown["balance_before"] == 1_000 and "balance_after" not in shown
    assert not [k for k, v in shown.items() if v is None or v == []], shown
    assert {"turn", "river", "dealer_cards", "deck", "salt", "ended_at"}.isdisjoint(shown)


# Issue 29 gap "state an operator cannot read": campaigns and hands left, limits, block, sessions.
FAR = NOW + timedelta(days=3650)  # an expiry the wall clock (the service's now) does not reach
PRINT = "0" * 32  # a command's fingerprint: the query service does not judge it


def _at(minutes: int) -> dict[str, Any]:
    return {"player_id": "p1", "occurred_at": NOW + timedelta(minutes=minutes)}


def granted(campaign: str, hands: int, expires_at: Any = FAR) -> FreeHandsGranted:
    return FreeHandsGranted(
        event_id=f"g-{campaign}", **_at(0), campaign_id=campaign, command_id=f"grant-{campaign}",
        fingerprint=PRINT, table_id="eur-low", currency="EUR", hands=hands, ante=500,
        aa_bonus=100, expires_at=expires_at,
    )  # fmt: skip


def free_stake(campaign: str, round_id: str, minutes: int) -> FreeStakeTaken:
    return FreeStakeTaken(
        event_id=f"fs-{round_id}", **_at(minutes), round_id=round_id,
        idempotency_key=f"stake:{round_id}", currency="EUR", amount=600, available=1_000,
        held=0, campaign_id=campaign, ante=500, aa_bonus=100,
    )  # fmt: skip


async def test_promotions_show_each_campaign_with_the_hands_left(query: Harness) -> None:
    refund = FreeStakeRefunded(
        event_id="fr-r2", **_at(3), round_id="r2", idempotency_key="refund:r2", currency="EUR",
        amount=600, available=1_000, held=0, campaign_id="welcome",
    )  # fmt: skip
    cancelled = FreeHandsCancelled(
        event_id="c-spring", **_at(4), campaign_id="spring", command_id="cancel-spring",
        fingerprint=PRINT, remaining=2,
    )  # fmt: skip
    expired = FreeHandsExpired(event_id="x-old", **_at(5), campaign_id="old", remaining=1)
    await query.feed(
        granted("welcome", 3), granted("spring", 2), granted("old", 1),
        granted("lapsed", 4, expires_at=NOW),  # past its expiry, its event not written yet
        free_stake("welcome", "r1", 1), free_stake("welcome", "r2", 2), refund, cancelled,
        expired,
    )  # fmt: skip
    # Read again (a replay overlapping the live read): each counted once.
    await query.feed(free_stake("welcome", "r1", 1), free_stake("welcome", "r2", 2), refund)

    reply = await query.ask(PromotionsQuery)

    assert isinstance(reply, PromotionsReply)
    shown = {c.campaign_id: (c.status, c.hands, c.played, c.remaining) for c in reply.campaigns}
    assert shown == {
        "welcome": ("active", 3, 1, 2),  # r1 played, r2 voided: its hand given back
        "spring": ("cancelled", 2, 0, 0),
        "old": ("expired", 1, 0, 0),
        "lapsed": ("expired", 4, 0, 0),
    }
    [welcome] = [c for c in reply.campaigns if c.campaign_id == "welcome"]
    assert (welcome.table_id, welcome.ante, welcome.aa_bonus, welcome.expires_at) == (
        "eur-low", 500, 100, FAR,
    )  # fmt: skip
    assert [c.campaign_id for c in reply.campaigns] == ["welcome", "spring", "old", "lapsed"]


async def test_promotions_of_a_player_with_none_are_an_empty_list(query: Harness) -> None:
    await query.feed(*play(game(0), 1_000).wallet)
    reply = await query.ask(PromotionsQuery)
    assert isinstance(reply, PromotionsReply) and reply.campaigns == ()


async def test_protection_shows_limits_block_and_open_sessions(query: Harness) -> None:
    def limits(minutes: int, currency: str, **set_: int) -> LimitsSet:
        return LimitsSet(
            event_id=f"l-{minutes}", **_at(minutes), command_id=f"limits-{minutes}",
            limits={"currency": currency, **set_},
        )  # fmt: skip

    def started_at(table: str, session: str, minutes: int) -> SessionStarted:
        return SessionStarted(
            event_id=f"s-{session}", **_at(minutes), session_id=session, table_id=table,
            round_id=f"r-{session}", command_id=f"bet-{session}", idle_timeout_s=600,
        )  # fmt: skip

    ended = SessionEnded(
        event_id="e-s2", **_at(6), session_id="s2", table_id="eur-high",
        reason=SessionEndReason.IDLE_TIMEOUT,
    )  # fmt: skip
    checked = RealityCheckAcknowledged(
        event_id="rc-1", **_at(7), command_id="ack-1", table_id="eur-low", session_id="s1"
    )
    blocked = PlayerBlocked(event_id="b-1", **_at(8), command_id="block-1", reason="self-exclusion")
    await query.feed(
        limits(1, "EUR", wager_per_day=10_000), limits(2, "GBP", loss_per_day=5_000),
        limits(3, "EUR", loss_per_day=2_000, reality_check_s=900),  # replaces the EUR set
        started_at("eur-low", "s1", 4), started_at("eur-high", "s2", 5), ended, checked, blocked,
    )  # fmt: skip

    reply = await query.ask(ProtectionQuery)

    assert isinstance(reply, ProtectionReply)
    assert (reply.blocked, reply.blocked_reason) == (True, "self-exclusion")
    assert reply.blocked_at == NOW + timedelta(minutes=8)
    assert [lim.model_dump(exclude_none=True) for lim in reply.limits] == [
        {"currency": "GBP", "loss_per_day": 5_000},
        {"currency": "EUR", "loss_per_day": 2_000, "reality_check_s": 900},
    ]
    [session] = reply.sessions
    assert (session.session_id, session.table_id) == ("s1", "eur-low")
    assert session.started_at == NOW + timedelta(minutes=4)
    assert session.checked_at == NOW + timedelta(minutes=7)

    await query.feed(PlayerUnblocked(event_id="u-1", **_at(9), command_id="unblock-1"))
    unblocked = await query.ask(ProtectionQuery)
    assert (unblocked.blocked, unblocked.blocked_reason, unblocked.blocked_at) == (
        False,
        None,
        None,
    )


async def test_protection_of_a_player_with_none_is_unblocked_and_unlimited(
    query: Harness,
) -> None:
    await query.feed(*play(game(0), 1_000).wallet)
    reply = await query.ask(ProtectionQuery)
    assert isinstance(reply, ProtectionReply)
    assert (reply.blocked, reply.limits, reply.sessions) == (False, (), ())
