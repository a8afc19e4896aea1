"""Dealer test vocabulary: a table, its decider over a forced deck, commands, and ticks."""

from __future__ import annotations

import base64
import uuid
from copy import deepcopy
from datetime import timedelta
from typing import Any

from holdem.core.cards import Card
from holdem.core.contracts import (
    Call,
    DeckSealed,
    Fold,
    Message,
    RoundVoided,
    Settled,
    VoidRound,
)
from holdem.dealer.context import DealerContext, Tick, TimeoutPolicy, TimingRules
from holdem.dealer.decide import bind
from holdem.dealer.state import DealerState, evolve, initial_state
from holdem.dealer.vault import Vault, parse_keys
from support.deciders import NOW, Decider
from support.rounds import RoundEvents

TABLE = TimingRules(
    decision_timeout=timedelta(seconds=30),
    timeout_policy=TimeoutPolicy.FOLD,
    stuck_after=timedelta(seconds=10),
)
GAME = RoundEvents()  # As Ad vs 7c 2d on Ah Ks 9d 4c 3h


# The tests' vault key ring (never a production key): HOLDEM_DEALER_VAULT_KEYS's format.
VAULT_KEYS = "test-1:" + base64.b64encode(bytes(range(32))).decode()
VAULT = Vault(parse_keys(VAULT_KEYS), "test-1")


def unseal(record: DeckSealed) -> tuple[str, ...]:
    """The card texts of a vault record, opened with the tests' key (the audit's ``unseal``)."""
    return tuple(str(Card(code)) for code in VAULT.open(record).codes)


def dealer_at(table: TimingRules = TABLE, game: RoundEvents = GAME) -> Decider[DealerState]:
    """The dealer's decider at ``table``, shuffling ``game.deck`` with ``game.salt``."""
    deck = bind(table, lambda: (game.deck, game.salt), VAULT)
    return Decider[DealerState](initial_state, evolve, deck, copy=deepcopy)


DEALER = dealer_at()


def _command(model: type[Any], round_id: str, player_id: str, command_id: str | None) -> Any:
    return model(
        event_id=uuid.uuid4().hex,
        command_id=command_id or uuid.uuid4().hex,
        player_id=player_id,
        round_id=round_id,
        occurred_at=NOW,
    )


def call(round_id: str = "r1", player_id: str = "p1", command_id: str | None = None) -> Call:
    command: Call = _command(Call, round_id, player_id, command_id)
    return command


def fold(round_id: str = "r1", player_id: str = "p1", command_id: str | None = None) -> Fold:
    command: Fold = _command(Fold, round_id, player_id, command_id)
    return command


def void_round(
    round_id: str = "r1", player_id: str = "p1", command_id: str | None = None
) -> VoidRound:
    command: VoidRound = _command(VoidRound, round_id, player_id, command_id)
    return command


def settled(game: RoundEvents = GAME) -> Settled:
    """Settlement's result for a called ``game`` (the amounts do not matter to the dealer)."""
    return Settled(
        **game.envelope("settled", 4),
        currency=game.currency,
        decision="call",
        result="win",
        dealer_qualifies=False,
        ante=game.ante,
        aa_bonus=game.aa_bonus,
        call=2 * game.ante,
        ante_return=2 * game.ante,
        call_return=2 * game.ante,
        bonus_return=0,
        total_return=4 * game.ante,
        player_category="three_of_a_kind",
        dealer_category="high_card",
        bonus_class="aces_to_straight",
        bonus_category="three_of_a_kind",
    )


def sealed(game: RoundEvents = GAME) -> DeckSealed:
    """The dealer's vault record of ``game``'s deck."""
    envelope = game.envelope("sealed", 0)
    fields = VAULT.seal(envelope["round_id"], envelope["player_id"], game.deck, game.salt)
    return DeckSealed(**envelope, **fields)


def voided_by_settlement(game: RoundEvents = GAME) -> RoundVoided:
    return RoundVoided(**game.envelope("voided", 4), malfunction_id="m", reason="watchdog: late")


def tick(
    state: DealerState,
    seconds: float,
    table: TimingRules = TABLE,
    resumed: float | None = None,
) -> tuple[DealerState, list[Message]]:
    """The runtime's periodic call ``seconds`` after NOW (``resumed``: seconds after NOW when
    the pipeline last resumed); the events are folded like own events."""
    now = NOW + timedelta(seconds=seconds)
    resumed_at = None if resumed is None else NOW + timedelta(seconds=resumed)
    ctx = DealerContext(now=now, cause_id=f"tick:{now.isoformat()}", table=table, vault=VAULT)
    events = DEALER.decide(state, Tick(now, resumed_at), ctx)
    state = deepcopy(state)  # the caller's state stays as it was (tests branch off one state)
    for event in events:
        state = evolve(state, event)
    return state, events
