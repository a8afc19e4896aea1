"""Free-hand campaigns and promotional credits under random scripts (ADR 029): whatever the
order of grants, plays, decisions, voids, cancellations, expiries and resent credits, the audit
is clean (conservation with the promotion account, every free hand paid by the rule), a
campaign never plays more hands than it grants, replay and snapshots give the live state."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.deciders import NOW
from support.promotions import Promoted, cancel, credit_promo, grant, play
from support.rounds import RoundEvents, deck_for
from support.wallet import deposit

from holdem.core.contracts import FreeStakeRefunded, FreeStakeTaken, RoundVoided
from holdem.wallet import snapshot
from holdem.wallet.state import evolve, initial_state

DECKS = [
    deck_for("AsAd", "7c2d", "AhKs9d4c3h"),  # a win, the bonus paid
    deck_for("7h2c", "KcKd", "Qs9h5d4c3s"),  # a loss
    deck_for("7h2c", "8d3c", "AsKdQhJcTs"),  # a tie
]
ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("grant"), st.sampled_from(["c1", "c2"]), st.integers(1, 3)),
        st.tuples(st.just("play"), st.sampled_from(["c1", "c2", "c3"])),
        st.tuples(st.just("finish"), st.integers(0, 2), st.sampled_from(["call", "fold"])),
        st.tuples(st.just("void")),
        st.tuples(st.just("cancel"), st.sampled_from(["c1", "c2"])),
        st.tuples(st.just("later"), st.integers(1, 90)),  # minutes, then the tick
        st.tuples(st.just("credit"), st.sampled_from(["k1", "k2"])),
    ),
    max_size=30,
)


def run(script: list[tuple[Any, ...]]) -> Promoted:
    p = Promoted()
    p.send(deposit(50_000, command_id="d1"))
    now, rounds, open_round = NOW, 0, None
    for action in script:
        kind = action[0]
        if kind == "grant":
            expires = now + timedelta(hours=1)
            p.send(grant(hands=action[2], campaign_id=action[1], expires_at=expires, at=now), now)
        elif kind == "play" and open_round is None:
            rounds += 1
            events = p.send(play(f"r{rounds}", campaign_id=action[1], at=now), now)
            open_round = (
                f"r{rounds}" if any(isinstance(e, FreeStakeTaken) for e in events) else None
            )
        elif kind == "finish" and open_round is not None:
            p.finish(open_round, DECKS[action[1]], action[2])
            open_round = None
        elif kind == "void" and open_round is not None:
            game = RoundEvents(round_id=open_round)
            void = RoundVoided(**game.envelope("voided", 4), malfunction_id="m", reason="test")
            p.send(void, now, fold=True)
            open_round = None
        elif kind == "cancel":
            p.send(cancel(action[1], at=now), now)
        elif kind == "later":
            now += timedelta(minutes=action[1])
            p.tick(now)
        elif kind == "credit":
            p.send(credit_promo(700, command_id=action[1], at=now), now)
    if open_round is not None:  # every round ends, so the audit judges every payout
        p.finish(open_round, DECKS[0])
    return p


@settings(max_examples=150, deadline=None)
@given(ACTIONS)
def test_any_script_keeps_the_books_and_the_campaigns_sound(script: list[tuple[Any, ...]]) -> None:
    p = run(script)

    assert p.audit() == []
    for campaign in p.state.campaigns.get("p1", {}).values():
        taken = sum(
            1 if isinstance(e, FreeStakeTaken) else -1
            for e in p.log
            if isinstance(e, FreeStakeTaken | FreeStakeRefunded)
            and e.campaign_id == campaign.campaign_id
        )
        assert 0 <= campaign.played == taken <= campaign.hands
    replayed = initial_state()
    for event in p.log:
        replayed = evolve(replayed, event)
    assert replayed == p.state
    assert snapshot.load_state(snapshot.dump_state(p.state)) == p.state
