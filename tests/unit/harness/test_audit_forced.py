"""The audit's forced-deck check (ADR 030): a forced play-money round passes and is counted; a
forced real-money round, a reveal that disagrees with its deal, and a forced deal no DeckForced
preceded are each named."""

from __future__ import annotations

import uuid
from copy import deepcopy
from typing import Any

from support.dealer import GAME, TABLE, VAULT, call
from support.deciders import NOW, Decider
from support.rounds import RoundEvents

from holdem.core.contracts import Dealt, ForceNextDeck, Mode, dump
from holdem.dealer.decide import bind
from holdem.dealer.state import DealerState, evolve, initial_state
from holdem.harness.audit import Record, check
from holdem.harness.audit_forced import forced_violations

DEALER = Decider[DealerState](
    initial_state, evolve, bind(TABLE, lambda: (GAME.deck, GAME.salt), VAULT, True), copy=deepcopy
)
ROYAL = ("As", "Ks", "4c", "4d", "Qs", "Js", "Ts")


def records(*messages: Any) -> list[Record]:
    return [Record.of(m.TOPIC, 0, n, dump(m)) for n, m in enumerate(messages)]


def forced_round(mode: Mode = Mode.FUN) -> list[Any]:
    """A ForceNextDeck's DeckForced, then a called play-money round dealt from it."""
    force = ForceNextDeck(
        event_id=uuid.uuid4().hex, command_id="f1", player_id="p1", occurred_at=NOW, cards=ROYAL
    )
    state, forced = DEALER.when(DEALER.initial_state(), force, fold_input=False)
    bet = RoundEvents(mode=mode).bet_placed()
    state, dealt = DEALER.when(state, bet)
    _, called = DEALER.when(state, call(), fold_input=False)
    return [*forced, bet, *dealt, *called]


def test_a_forced_fun_round_is_sound_and_counted() -> None:
    log = records(*forced_round())

    assert forced_violations(log) == []
    report = check(log, require_ended=False)  # (no wallet records here: money is not checked)
    assert report.forced == 1 and not [v for v in report.violations if "forced" in v]


def test_a_forced_real_money_round_is_a_violation_wherever_it_comes_from() -> None:
    log = forced_round()
    # A dealer that broke the rule: the same round, its events saying real money.
    real = [
        e.model_copy(update={"mode": Mode.REAL}) if hasattr(e, "mode") and e.round_id else e
        for e in log
    ]

    found = forced_violations(records(*real))

    assert found == ["p1/r1: a real-money round dealt from a forced deck"]
    assert found[0] in check(records(*real), require_ended=False).violations


def test_a_reveal_that_disagrees_with_its_deal_and_a_forced_deal_from_nowhere_are_named() -> None:
    log = forced_round()
    unforced_reveal = [*log[:-1], log[-1].model_copy(update={"forced": False})]
    no_force = [e for e in log if e.type != "round.deck_forced"]
    other_cards = [
        e.model_copy(update={"cards": ("2c",)}) if e.type == "round.deck_forced" else e for e in log
    ]

    assert forced_violations(records(*unforced_reveal)) == [
        "p1/r1: round.called says forced=False, its Dealt True"
    ]
    assert forced_violations(records(*no_force)) == [
        "p1/r1: dealt forced with no DeckForced of its player before it"
    ]
    assert forced_violations(records(*other_cards)) == [
        "p1/r1: its deck does not start with the cards forced ('2c',)"
    ]


def test_an_unforced_round_counts_nothing() -> None:
    log = [e for e in forced_round() if e.type != "round.deck_forced"]
    plain = [e.model_copy(update={"forced": False}) if isinstance(e, Dealt) else e for e in log]
    plain = [
        e.model_copy(update={"forced": False}) if e.type == "round.called" else e for e in plain
    ]

    assert check(records(*plain), require_ended=False).forced == 0
