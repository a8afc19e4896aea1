"""A reply leaves out its null optional fields and the figures its round has not reached
(issue 29: ``round_id: null`` on every reply, a dealt round showing ``call 0``); what it leaves
out reads back as the model's default."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from holdem.core.contracts import OpenRoundReply, PromotionsReply, dump, parse
from holdem.core.contracts.queries import CampaignView, RoundView

NOW = datetime(2026, 11, 30, 19, 20, tzinfo=UTC)
ENVELOPE = {"event_id": "y-1", "player_id": "p-1", "occurred_at": NOW, "causation_id": "q-1",
            "correlation_id": "c-1", "requester_id": "lobby-1"}  # fmt: skip


def view(state: str, **figures: object) -> RoundView:
    return RoundView(round_id="r-1", state=state, currency="EUR", mode="real", started_at=NOW,
                     ante=500, aa_bonus=250, total_bet=750, **figures)  # fmt: skip


def test_a_reply_leaves_out_its_null_fields_but_keeps_none_open() -> None:
    body = json.loads(dump(OpenRoundReply(**ENVELOPE, open_round=None)))
    assert "round_id" not in body and body["open_round"] is None
    assert body["causation_id"] == "q-1"
    campaign = CampaignView(campaign_id="w", table_id="t", currency="EUR", ante=500, aa_bonus=0,
                            hands=5, remaining=5, granted_at=NOW, expires_at=NOW)  # fmt: skip
    reply = PromotionsReply(**ENVELOPE, campaigns=(campaign,))
    assert "ended_at" not in json.loads(dump(reply))["campaigns"][0]
    assert parse("replies", dump(reply)) == reply


def test_a_dealt_round_shows_what_is_staked_and_no_figure_it_has_not_reached() -> None:
    reply = OpenRoundReply(**ENVELOPE, open_round=view("dealt"))
    shown = json.loads(dump(reply))["open_round"]
    assert shown["total_bet"] == 750
    for later in ("call", "auto", "ante_return", "call_return", "bonus_return", "total_won"):
        assert later not in shown, later
    assert parse("replies", dump(reply)) == reply


def test_a_decided_round_shows_its_call_and_no_return_yet() -> None:
    decided = view("decided", call=1_000, decision="call")
    shown = json.loads(dump(OpenRoundReply(**ENVELOPE, open_round=decided)))["open_round"]
    assert shown["call"] == 1_000 and shown["auto"] is False
    assert "total_won" not in shown and "ante_return" not in shown
