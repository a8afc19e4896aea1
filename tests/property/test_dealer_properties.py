"""Dealer invariants over random interleavings of commands, log events, echoes and ticks."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest
import support.dealer
import support.dealer_runs
from hypothesis import given, settings
from hypothesis import strategies as st
from support.dealer_runs import Run, actions

from holdem.core.contracts import Called, Folded, RoundVoided
from holdem.dealer.snapshot import dump_state
from holdem.dealer.state import DealerState, evolve, initial_state


def per_round(events: list[Any], *kinds: type) -> Counter[str]:
    return Counter(e.round_id for e in events if isinstance(e, kinds))


def distinct(events: list[Any]) -> list[Any]:
    """One of each event (an echo puts the same event in the log again)."""
    return list({e.event_id: e for e in events}.values())


@settings(max_examples=300, deadline=None)
@given(st.lists(actions, max_size=40))
def test_a_round_gets_at_most_one_void_one_decision_and_never_both(
    script: list[tuple[Any, ...]],
) -> None:
    run = Run()
    for action in script:
        run.act(action)

    voids = per_round(run.produced, RoundVoided)
    decisions = per_round(run.produced, Called, Folded)
    assert all(n <= 1 for n in voids.values()), voids
    assert all(n <= 1 for n in decisions.values()), decisions
    assert not voids.keys() & decisions.keys()
    assert all(n <= 1 for n in per_round(distinct(run.log), RoundVoided).values())


@settings(max_examples=200, deadline=None)
@given(st.lists(actions, max_size=40))
def test_the_state_is_the_fold_of_the_log_and_folding_it_again_changes_nothing(
    script: list[tuple[Any, ...]],
) -> None:
    run = Run()
    for action in script:
        run.act(action)

    replayed = initial_state()
    for event in run.log:
        replayed = evolve(replayed, event)
    assert replayed == run.state
    for event in run.log:
        replayed = evolve(replayed, event)
    assert replayed == run.state


@settings(max_examples=150, deadline=None)
@given(st.lists(actions, max_size=40))
def test_decide_never_mutates_the_state_it_is_given(script: list[tuple[Any, ...]]) -> None:
    # The state discipline (holdem.core.decider): evolve folds in place, decide only reads, so
    # what a session end or a timeout leaves is worked out without folding into the state.
    inner = support.dealer.DEALER.decide

    def checked(state: DealerState, message: Any, ctx: Any) -> list[Any]:
        before = dump_state(state)
        events = inner(state, message, ctx)
        assert dump_state(state) == before, message
        return events

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(support.dealer_runs, "DEALER", replace(support.dealer.DEALER, decide=checked))
        patch.setattr(support.dealer, "DEALER", replace(support.dealer.DEALER, decide=checked))
        run = Run()
        for action in script:
            run.act(action)
