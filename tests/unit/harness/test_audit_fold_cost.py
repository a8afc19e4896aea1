"""The streaming audit's per-record cost (issue 31 item 1), each cut shown equal to what it
replaces: a round's money asks a movement's campaign only of the types that declare one (a field
a model lacks costs pydantic's ``__getattr__`` and an AttributeError), and an event id is looked
up and remembered in one call (``Window.first``, a ``get`` then a ``put``), and a round's deck is
parsed, hashed and dealt once, for its deck check and its Settled alike (``verify.settled_of``)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pydantic import BaseModel
from test_audit_fold import history

import holdem.core.verify
import holdem.harness.audit
from holdem.core.cards import parse_cards
from holdem.core.contracts import ALL_MODELS, Called, Folded
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.deck import deal
from holdem.core.verify import Stakes, expected_settled, result_of, settled_of
from holdem.harness.audit_fold import fold
from holdem.harness.audit_money import _campaign
from holdem.harness.audit_window import Window


def test_folding_a_history_reads_no_field_a_message_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    lacking = BaseModel.__getattr__  # type: ignore[attr-defined]

    def counting(self: BaseModel, name: str) -> Any:
        asked.append(f"{type(self).__name__}.{name}")
        return lacking(self, name)

    records = history(40)
    monkeypatch.setattr(BaseModel, "__getattr__", counting)
    report = fold(records)
    assert report.ok and report.rounds == 40, report.violations
    assert asked == []


@pytest.mark.parametrize("campaign", [None, "spring"])
def test_a_movements_campaign_is_what_getattr_reads(campaign: str | None) -> None:
    movements = [m for m in ALL_MODELS if issubclass(m, WalletEvent)]
    assert movements
    for model in movements:
        # model_construct leaves a required field unset: getattr's default answers then too.
        declared = campaign is not None and "campaign_id" in model.model_fields
        fields: dict[str, Any] = {"campaign_id": campaign} if declared else {}
        m = model.model_construct(**fields)
        assert _campaign(m) == getattr(m, "campaign_id", None), model


def test_window_first_is_get_then_put() -> None:
    rng = random.Random(31)
    left: list[tuple[int, int]] = []
    left_old: list[tuple[int, int]] = []
    new: Window[int, int] = Window(4, lambda k, v: left.append((k, v)))
    old: Window[int, int] = Window(4, lambda k, v: left_old.append((k, v)))
    for n in range(2_000):
        key = rng.randrange(12)
        found = old.get(key)
        if found is None:
            old.put(key, n)
        assert new.first(key, n) == found
        assert list(new.items()) == list(old.items())
    assert left == left_old and len(left) > 100


def test_a_rounds_deck_is_hashed_once_for_its_deck_check_and_its_settled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed: list[str] = []

    def counting(module: Any) -> None:
        real = module.verify_commitment

        def verify_commitment(deck: Any, salt: bytes, commitment: str) -> bool:
            hashed.append(commitment)
            return bool(real(deck, salt, commitment))

        monkeypatch.setattr(module, "verify_commitment", verify_commitment)

    records = history(40)
    counting(holdem.harness.audit)
    counting(holdem.core.verify)
    report = fold(records)
    assert report.ok and report.rounds == 40, report.violations
    decided = {r.message.round_id for r in records if isinstance(r.message, Called | Folded)}
    assert len(decided) == 40
    assert sorted(hashed) == sorted(set(hashed)) and len(hashed) == 40  # was 80: twice a round


def test_the_settlement_of_a_dealt_deck_is_the_rules_settlement_of_its_record() -> None:
    records = history(60)
    bets = {r.message.round_id: r.message for r in records if r.message.type == "round.bet_placed"}
    dealt = {r.message.round_id: r.message for r in records if r.message.type == "round.dealt"}
    reveals = [r.message for r in records if isinstance(r.message, Called | Folded)]
    assert len(reveals) == 60
    for reveal in reveals:
        bet, commitment = bets[reveal.round_id], dealt[reveal.round_id].commitment
        cards = deal(list(parse_cards(reveal.deck)))
        stakes = {"currency": bet.currency, "mode": bet.mode, "ante": bet.ante,
                  "aa_bonus": bet.aa_bonus}  # fmt: skip
        for decision in ("call", "fold"):
            expected = expected_settled(
                deck=reveal.deck, salt=reveal.salt, commitment=commitment, decision=decision,
                **stakes,
            )  # fmt: skip
            assert settled_of(cards, bet, decision) == expected
            assert settled_of(cards, Stakes(**stakes), decision) == expected
        assert result_of(bet, commitment, reveal) == settled_of(cards, bet, "call")
