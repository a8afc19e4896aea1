"""Settlement's fold of the rounds topic: each round's bets, cards, decision, faults and end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from pydantic import AwareDatetime, NonNegativeInt

from holdem.core.contracts import (
    BetPlaced,
    Called,
    Dealt,
    Folded,
    Malfunction,
    Mode,
    RoundVoided,
    Settled,
)
from holdem.core.contracts.rounds import SETTLEMENT_MISMATCH
from holdem.core.decider import ByClass
from holdem.core.rules import STANDARD
from holdem.core.verify import VerificationError, differences, result_of

HISTORY_LIMIT: Final = 50  # rounds kept per player: the client's "recent rounds" screen
# Ended rounds remembered per player (ADR 010), so a late or redelivered event of a recent round
# is recognised as ended; older ones leave the state, which no longer grows with history.
CLOSED_KEPT: Final = 256

Status = Literal["open", "settled", "voided"]
RoundKey = tuple[str, str]  # (player_id, round_id): round ids are client-chosen, per player
Decision = Called | Folded


@dataclass(frozen=True, slots=True)
class Fault:
    """A Malfunction reported for a round: it must be voided unless it is already settled."""

    malfunction_id: str
    source: str
    reason: str


@dataclass(frozen=True, slots=True)
class RoundState:
    """What settlement knows of one round; the first of each event wins (redelivery is a no-op).

    A terminal round keeps only its status: nothing after Settled or RoundVoided changes it.
    """

    round_id: str
    player_id: str
    bet: BetPlaced | None = None
    dealt: Dealt | None = None
    decision: Decision | None = None
    faults: tuple[Fault, ...] = ()
    status: Status = "open"
    settled_id: str | None = None  # the Settled that ended it (settlement's own result)
    mismatch_id: str | None = None  # the wallet's refusal of that Settled (ADR 008)

    @property
    def terminal(self) -> bool:
        return self.status != "open"

    @property
    def decided(self) -> bool:
        return self.decision is not None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One finished real-money round as the player's game history shows it."""

    round_id: str
    currency: str
    pay_table: str
    ante: NonNegativeInt
    aa_bonus: NonNegativeInt
    call: NonNegativeInt
    decision: Literal["call", "fold"] | None
    auto: bool
    result: Literal["win", "lose", "push", "fold", "voided"]
    ante_return: NonNegativeInt
    call_return: NonNegativeInt
    bonus_return: NonNegativeInt
    total_return: NonNegativeInt
    player_cards: tuple[str, ...]
    flop: tuple[str, ...]
    dealer_cards: tuple[str, ...]
    turn_river: tuple[str, ...]
    placed_at: AwareDatetime | None
    decided_at: AwareDatetime | None
    ended_at: AwareDatetime
    void_reason: str | None = None


@dataclass(slots=True)
class SettlementState:
    """The open rounds of the assigned partitions and each player's last CLOSED_KEPT ended
    ones (``ended``: their ids, oldest first), and each real-money player's recent rounds.

    ``evolve`` updates this accumulator in place (``holdem.core.decider``), so replaying a long
    log stays linear; a round or history entry stored in it is a frozen value, replaced whole.
    """

    rounds: dict[RoundKey, RoundState] = field(default_factory=dict)
    ended: dict[str, list[str]] = field(default_factory=dict)
    history: dict[str, tuple[HistoryEntry, ...]] = field(default_factory=dict)
    history_limit: NonNegativeInt = HISTORY_LIMIT
    open_rounds: int = 0  # rounds not yet ended, kept here so the gauge costs O(1)

    def round(self, player_id: str, round_id: str) -> RoundState | None:
        return self.rounds.get((player_id, round_id))

    def recent(self, player_id: str) -> tuple[HistoryEntry, ...]:
        """The player's last rounds, newest first (real money only)."""
        return self.history.get(player_id, ())


RoundsEvent = BetPlaced | Dealt | Called | Folded | Malfunction | Settled | RoundVoided


def initial_state(history_limit: int = HISTORY_LIMIT) -> SettlementState:
    return SettlementState(history_limit=history_limit)


def evolve(state: SettlementState, event: object) -> SettlementState:
    """Fold one rounds-topic event; idempotent, and events of other types are ignored. A
    Settled is folded only if it is the result the rules give the round (recomputed once)."""
    return _evolve(state, event, own=False)


def evolve_own(state: SettlementState, event: object) -> SettlementState:
    """``evolve`` for an event settlement's own decide just built (``Spec.evolve_own``): its
    Settled is the result it computed for this very round, so it is not computed again."""
    return _evolve(state, event, own=True)


def _evolve(state: SettlementState, event: object, *, own: bool) -> SettlementState:
    route = _route(event)
    if route is None:  # not a RoundsEvent
        return state
    apply, ends = route
    key = (event.player_id, event.round_id)  # type: ignore[attr-defined]
    current = state.rounds.get(key) or RoundState(key[1], key[0])
    if current.status == "settled":
        return _after_settled(state, current, event)  # type: ignore[arg-type]
    if current.terminal:
        return state
    updated = apply(current, event, own)
    if updated is current:
        return state
    if key not in state.rounds:
        state.open_rounds += 1
    if ends:  # Settled or RoundVoided: cards and deck are no longer needed, the status is
        state.open_rounds -= 1
        _remember(state, current, event)  # type: ignore[arg-type]
        state.rounds[key] = updated
        _forget_old_rounds(state, current.player_id, current.round_id)
        return state
    state.rounds[key] = updated
    return state


def _forget_old_rounds(state: SettlementState, player_id: str, round_id: str) -> None:
    """Note that the round ended; the player's ended round beyond the last CLOSED_KEPT goes."""
    ended = state.ended.setdefault(player_id, [])
    ended.append(round_id)
    if len(ended) > CLOSED_KEPT:
        old = ended.pop(0)
        forgotten = state.rounds.get((player_id, old))
        if forgotten is not None and forgotten.terminal:
            del state.rounds[(player_id, old)]


# Each branch of the fold takes a round and gives it back unchanged (the very object) or as the
# event leaves it, built whole (``dataclasses.replace`` cost more than the rest of the fold).
def _bet(r: RoundState, event: BetPlaced, own: bool) -> RoundState:
    if r.bet:
        return r
    return RoundState(r.round_id, r.player_id, event, r.dealt, r.decision, r.faults)


def _dealt(r: RoundState, event: Dealt, own: bool) -> RoundState:
    if r.dealt:
        return r
    return RoundState(r.round_id, r.player_id, r.bet, event, r.decision, r.faults)


def _decided(r: RoundState, event: Decision, own: bool) -> RoundState:
    if r.decision:
        return r
    return RoundState(r.round_id, r.player_id, r.bet, r.dealt, event, r.faults)


def _fault(r: RoundState, event: Malfunction, own: bool) -> RoundState:
    if event.refuses_settled():  # the wallet refusing a record, not a fault of the round
        return r
    if any(f.malfunction_id == event.event_id for f in r.faults):
        return r
    fault = Fault(event.event_id, event.source, event.reason)
    return RoundState(r.round_id, r.player_id, r.bet, r.dealt, r.decision, (*r.faults, fault))


def _settled(r: RoundState, event: Settled, own: bool) -> RoundState:
    if not own and not is_the_result(r, event):
        return r  # not what settlement publishes for this round: a forgery, never folded
    return RoundState(r.round_id, r.player_id, status="settled", settled_id=event.event_id)


def _voided(r: RoundState, event: RoundVoided, own: bool) -> RoundState:
    return RoundState(r.round_id, r.player_id, status="voided")


def is_the_result(round_: RoundState, settled: Settled) -> bool:
    """True if ``settled`` is exactly the result the rules give this decided round."""
    bet, dealt, decision = round_.bet, round_.dealt, round_.decision
    if bet is None or dealt is None or decision is None:
        return False
    try:
        expected = result_of(bet, dealt.commitment, decision)
    except VerificationError:
        return False
    return not differences(settled, expected)


def _after_settled(
    state: SettlementState, round_: RoundState, event: RoundsEvent
) -> SettlementState:
    """A settled round changes only if the wallet refused that very Settled as a mismatch:
    the refusal is remembered, and the RoundVoided settlement then publishes for it ends it."""
    if (
        isinstance(event, Malfunction)
        and event.refuses_settled()
        and event.reason.startswith(SETTLEMENT_MISMATCH)
        and event.causation_id == round_.settled_id
        and round_.mismatch_id is None
    ):
        state.rounds[(round_.player_id, round_.round_id)] = replace(
            round_, mismatch_id=event.event_id
        )
    elif isinstance(event, RoundVoided) and event.malfunction_id == round_.mismatch_id:
        state.rounds[(round_.player_id, round_.round_id)] = replace(round_, status="voided")
        _forget_payout(state, round_, event)
    return state


def _forget_payout(state: SettlementState, round_: RoundState, end: RoundVoided) -> None:
    """The history line of a settlement the wallet refused becomes that of a void."""
    recent = state.history.get(round_.player_id, ())
    state.history[round_.player_id] = tuple(
        replace(
            entry,
            result="voided",
            ante_return=0,
            call_return=0,
            bonus_return=0,
            total_return=0,
            ended_at=end.occurred_at,
            void_reason=end.reason,
        )
        if entry.round_id == round_.round_id
        else entry
        for entry in recent
    )


def _remember(state: SettlementState, round_: RoundState, end: Settled | RoundVoided) -> None:
    """Put a round that just ended at the head of its player's history (real money only)."""
    if state.history_limit <= 0:
        return
    entry = history_entry(round_, end)
    if entry is None:
        return
    recent = (entry, *state.history.get(round_.player_id, ()))
    state.history[round_.player_id] = recent[: state.history_limit]


def _decision_name(decision: Decision | None) -> Literal["call", "fold"] | None:
    if decision is None:
        return None
    return "call" if isinstance(decision, Called) else "fold"


def history_entry(round_: RoundState, end: Settled | RoundVoided) -> HistoryEntry | None:
    """The history line of a round ending with ``end``; None in fun mode or for no bet at all."""
    bet, dealt, decision = round_.bet, round_.dealt, round_.decision
    if bet is None or bet.mode == Mode.FUN:
        return None
    settled = end if isinstance(end, Settled) else None
    return HistoryEntry(
        round_id=round_.round_id,
        currency=bet.currency,
        pay_table=(settled.pay_table if settled else None) or STANDARD.version,
        ante=bet.ante,
        aa_bonus=bet.aa_bonus,
        call=settled.call if settled else 0,
        decision=_decision_name(decision),
        auto=bool(decision and decision.auto),
        result=settled.result if settled else "voided",
        ante_return=settled.ante_return if settled else 0,
        call_return=settled.call_return if settled else 0,
        bonus_return=settled.bonus_return if settled else 0,
        total_return=settled.total_return if settled else 0,
        player_cards=dealt.player_cards if dealt else (),
        flop=dealt.flop if dealt else (),
        dealer_cards=decision.dealer_cards if decision else (),
        turn_river=(decision.turn, decision.river) if decision else (),
        placed_at=bet.occurred_at,
        decided_at=decision.occurred_at if decision else None,
        ended_at=end.occurred_at,
        void_reason=end.reason if isinstance(end, RoundVoided) else None,
    )


# Each RoundsEvent's branch of the fold, and whether it ends the round; None: not one of them.
_route: ByClass[tuple[Callable[[RoundState, Any, bool], RoundState], bool] | None] = ByClass(
    [
        (BetPlaced, (_bet, False)),
        (Dealt, (_dealt, False)),
        (Called | Folded, (_decided, False)),
        (Settled, (_settled, True)),
        (Malfunction, (_fault, False)),
        (RoundVoided, (_voided, True)),
    ],
    None,
)
