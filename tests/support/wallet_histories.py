"""Random wallet histories for property tests: deposits, bets, round events, forgeries."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from holdem.core.contracts import Called, Dealt, Folded, Message, Mode
from holdem.wallet.state import State
from support.deciders import NOW
from support.wallet import (
    WALLET,
    deposit,
    grant_fun,
    place_bet,
    round_events,
    settled,
    verified_settled,
    voided,
    withdraw,
)

PLAYERS = st.sampled_from(["p1", "p2"])
ROUNDS = st.sampled_from([f"r{i}" for i in range(6)])
MODES = st.sampled_from([Mode.REAL, Mode.FUN])
COMMAND_IDS = st.none() | st.sampled_from(["c1", "c2", "c3"])  # reuse makes duplicates
ANTES = st.sampled_from([99, 100, 700, 2_000, 150_000]) | st.integers(100, 3_000)
BONUSES = st.sampled_from([0, 0, 60_000]) | st.integers(0, 1_000)
DEPOSITS = st.sampled_from([100_000, 500_000]) | st.integers(1, 20_000)

STEPS = st.one_of(
    st.tuples(st.just("deposit"), PLAYERS, DEPOSITS, MODES, COMMAND_IDS),
    st.tuples(st.just("withdraw"), PLAYERS, st.integers(1, 20_000), MODES, COMMAND_IDS),
    st.tuples(st.just("bet"), PLAYERS, ROUNDS, ANTES, BONUSES, MODES, COMMAND_IDS),
    st.tuples(st.sampled_from(["dealt", "called", "folded", "voided"]), PLAYERS, ROUNDS),
    st.tuples(st.just("settled"), PLAYERS, ROUNDS, st.integers(0, 30_000)),
)
# A whole round in order, so that bets are followed by the events that move their money.
ENDINGS = st.lists(
    st.sampled_from(["called", "folded", "voided", "settled"]), min_size=1, max_size=3
)
SCRIPTS = st.tuples(
    st.just("script"), PLAYERS, ROUNDS, ANTES, BONUSES, MODES, ENDINGS, st.integers(0, 30_000)
)


def expand(script: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """A funded bet and its round events, as steps."""
    _, player, round_id, ante, bonus, mode, endings, total_return = script
    steps: list[tuple[Any, ...]] = [
        ("deposit", player, 4 * ante + bonus, mode, None),
        ("bet", player, round_id, ante, bonus, mode, None),
        ("dealt", player, round_id),
    ]
    for end in endings:
        extra = (total_return,) if end == "settled" else ()
        steps.append((end, player, round_id, *extra))
    return steps


HISTORIES = st.lists(STEPS | SCRIPTS.map(expand), max_size=30).map(
    lambda items: [s for item in items for s in (item if isinstance(item, list) else [item])]
)


def message_for(step: tuple[Any, ...], n: int, state: State) -> Message:
    """Build the step's message; ``n`` makes every event id unique, as the log's would be. An
    even settled total stands for settlement's true result, an odd one for a forgery."""
    kind, player = step[0], step[1]
    if kind == "deposit" and step[3] is Mode.FUN:  # play money is granted, never deposited
        return grant_fun(step[2], player, step[4])
    if kind in {"deposit", "withdraw"}:
        build = deposit if kind == "deposit" else withdraw
        return build(step[2], player, step[4], mode=step[3])
    if kind == "bet":
        _, _, round_id, ante, bonus, mode, command_id = step
        return place_bet(round_id, ante, bonus, player, command_id, mode=mode)
    round_id = step[2]
    stake = state.round_of(player, round_id)
    if kind == "settled" and stake is not None and step[3] % 2 == 0:
        decision = "call" if stake.call != "released" else "fold"
        bets = {"ante": stake.ante, "aa_bonus": stake.aa_bonus, "mode": stake.mode}
        return verified_settled(round_id, player, decision=decision, event_id=f"s-{n}", **bets)
    if kind == "settled":
        return settled(step[3], round_id, player, event_id=f"settled-{n}")
    if kind == "voided":
        return voided(round_id, player, event_id=f"voided-{n}")
    events = round_events(round_id, player)
    if kind == "dealt":
        return events.dealt(event_id=f"dealt-{n}")
    end = events.called() if kind == "called" else events.folded()
    return end.model_copy(update={"event_id": f"{kind}-{n}"})


def run(
    steps: list[tuple[Any, ...]], spacing: timedelta | None = None
) -> tuple[State, list[Message]]:
    """Decide each message live as the runtime would; return the state and the log the wallet
    replays (its own topic and the rounds it folds). With ``spacing``, the n-th message is sent
    and decided ``n * spacing`` after NOW (else all at NOW)."""
    state, log = WALLET.given([]), []
    for n, step in enumerate(steps):
        message = message_for(step, n, state)
        now = NOW + n * (spacing or timedelta(0))
        if spacing is not None:
            message = message.model_copy(update={"occurred_at": now})
        state, events = WALLET.when(state, message, now)
        if isinstance(message, Dealt | Called | Folded):
            log.append(message)
        log.extend(e for e in events if e.TOPIC == "wallet")
    return state, log
