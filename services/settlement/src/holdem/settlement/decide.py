"""Settlement's decisions: exactly one Settled or RoundVoided for every round once it is decided."""

from __future__ import annotations

from holdem.core.cards import Card
from holdem.core.contracts import (
    BetPlaced,
    Called,
    CommandRejected,
    Folded,
    Malfunction,
    Message,
    Reason,
    RoundVoided,
    Settled,
    VoidRound,
)
from holdem.core.decider import Context
from holdem.core.errors import RoundError
from holdem.core.rules import PayTable, RoundOutcome, pay_table, settle
from holdem.settlement.audit import pay_table_problem, round_problem
from holdem.settlement.state import Fault, RoundState, SettlementState

SOURCE = "settlement"  # Malfunction.source of the faults settlement finds itself
REASON_MAX = 500  # RoundVoided.reason and Malfunction.reason are bounded on the wire


def decide(state: SettlementState, message: object, ctx: Context) -> list[Message]:
    """The events settlement publishes for one rounds-topic message (already folded into state).

    Settlement owns a round from the dealer's Called/Folded on: it settles it, or voids it if a
    Malfunction is known for it or its deck does not verify. Before that, a bet pinned to a pay
    table settlement does not have is reported at once (a Malfunction: the dealer voids the
    round while it is undecided, settlement if it was decided first). Everything else, including
    a redelivered decision and a Malfunction for an undecided or ended round, yields nothing.
    """
    if isinstance(message, BetPlaced):
        return _on_bet(state, message, ctx)
    if isinstance(message, Called | Folded):
        return _on_decision(state, message, ctx)
    if isinstance(message, Malfunction):
        return _on_malfunction(state, message, ctx)
    return []


def _on_decision(state: SettlementState, event: Called | Folded, ctx: Context) -> list[Message]:
    round_ = state.round(event.player_id, event.round_id)
    if round_ is None or round_.terminal or round_.decision is None:
        return []
    if round_.faults:
        return [_voided(round_, round_.faults[0], ctx)]
    problem = round_problem(round_)
    if problem is None:
        try:
            return [_settled(round_, _outcome(round_), ctx)]
        except RoundError as error:
            problem = f"cannot settle: {error}"
    return _void_for(round_, problem, ctx)


def _on_bet(state: SettlementState, event: BetPlaced, ctx: Context) -> list[Message]:
    round_ = state.round(event.player_id, event.round_id)
    if round_ is None or round_.terminal or round_.bet is not event or round_.faults:
        return []  # not this bet (the round's first one is), ended, or already reported
    problem = pay_table_problem(event)
    if problem is None:
        return []
    return [
        Malfunction(**ctx.envelope(event.player_id, event.round_id), source=SOURCE, reason=problem)
    ]


def _on_malfunction(state: SettlementState, event: Malfunction, ctx: Context) -> list[Message]:
    round_ = state.round(event.player_id, event.round_id)
    if event.refuses_settled():
        # The wallet found settlement's own Settled wrong (the fold kept the refusal only then):
        # it was not paid, so the round is voided and refunded. Any other refusal cites a
        # record settlement did not write; its own result stands.
        if round_ is None or round_.status != "settled" or round_.mismatch_id != event.event_id:
            return []
        return [_voided(round_, Fault(event.event_id, event.source, event.reason), ctx)]
    if round_ is not None and round_.terminal and event.command_id is not None:
        # The operator's VoidRound lost the race with the round's end (issue 29): it gets one
        # answer it can act on, as the dealer gives a void of a round it knows ended.
        return [_void_refused(round_, event, ctx)]
    # Undecided rounds are the dealer's to void; ended rounds stay as they ended.
    if round_ is None or round_.terminal or not round_.decided:
        return []
    return [_voided(round_, Fault(event.event_id, event.source, event.reason), ctx)]


def _void_refused(round_: RoundState, event: Malfunction, ctx: Context) -> CommandRejected:
    assert event.command_id is not None
    return CommandRejected(
        **ctx.envelope(event.player_id, event.round_id),
        command_id=event.command_id,
        command_type=VoidRound.model_fields["type"].default,
        reason=Reason.ROUND_CLOSED,
        detail=f"the round was {round_.status} before the void reached it",
    )


def _tables(round_: RoundState) -> PayTable:
    assert round_.bet is not None
    tables = pay_table(round_.bet.pay_table)
    assert tables is not None, "round_problem guarantees a pay table settlement has"
    return tables


def _outcome(round_: RoundState) -> RoundOutcome:
    bet, dealt, decision = round_.bet, round_.dealt, round_.decision
    assert bet and dealt and decision, "round_problem guarantees a bet, a deal and a decision"
    board = (*dealt.flop, decision.turn, decision.river)
    return settle(
        player=[Card.parse(text) for text in dealt.player_cards],
        dealer=[Card.parse(text) for text in decision.dealer_cards],
        board=[Card.parse(text) for text in board],
        ante=bet.ante,
        aa_bonus=bet.aa_bonus,
        decision="call" if isinstance(decision, Called) else "fold",
        tables=_tables(round_),
    )


def _settled(round_: RoundState, outcome: RoundOutcome, ctx: Context) -> Settled:
    bet = round_.bet
    assert bet is not None
    called = isinstance(round_.decision, Called)
    tables = _tables(round_)
    return Settled(
        **ctx.envelope(round_.player_id, round_.round_id),
        currency=bet.currency,
        mode=bet.mode,
        decision="call" if called else "fold",
        ante=bet.ante,
        aa_bonus=bet.aa_bonus,
        call=tables.call_multiple * bet.ante if called else 0,
        pay_table=tables.version,
        **outcome.to_wire(),
    )


def _voided(round_: RoundState, fault: Fault, ctx: Context) -> RoundVoided:
    reason = f"malfunction from {fault.source}: {fault.reason}"
    return RoundVoided(
        **ctx.envelope(round_.player_id, round_.round_id),
        malfunction_id=fault.malfunction_id,
        reason=reason[:REASON_MAX],
    )


def _void_for(round_: RoundState, problem: str, ctx: Context) -> list[Message]:
    """A fault settlement found itself: report it as a Malfunction, and void the round for it."""
    malfunction = Malfunction(
        **ctx.envelope(round_.player_id, round_.round_id),
        source=SOURCE,
        reason=problem[:REASON_MAX],
    )
    fault = Fault(malfunction.event_id, SOURCE, malfunction.reason)
    return [malfunction, _voided(round_, fault, ctx)]
