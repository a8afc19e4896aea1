"""The dealer's decider: deal on BetPlaced, reveal on Call/Fold, void on Malfunction, time out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    Call,
    EndSession,
    Fold,
    ForceNextDeck,
    ForceRefusal,
    Malfunction,
    Message,
    Mode,
    PlayerBlocked,
    Reason,
    VoidRound,
)
from holdem.core.decider import Context
from holdem.dealer.context import DealerContext, DeckSource, Tick, TimingRules, no_deck_source
from holdem.dealer.events import (
    Decision,
    dealt,
    deck_forced,
    force_rejected,
    is_forced_deck,
    malfunction,
    opened_deck,
    rejected,
    reveal,
    seal_and_deal,
    void,
)
from holdem.dealer.sessions import on_end_session, on_player_blocked, open_for_bet
from holdem.dealer.state import (
    CLOSED,
    DECIDED,
    FORCE_COMMAND,
    UNDECIDED,
    DealerState,
    Phase,
    Round,
    folded_round,
)
from holdem.dealer.timers import on_tick
from holdem.dealer.vault import Vault


def decide(state: DealerState, message: Any, ctx: DealerContext) -> list[Message]:
    """The events that answer ``message`` given ``state`` (which already reflects it, if it is
    an event of a state role). Returns [] for anything already answered: inputs are redelivered.
    """
    if isinstance(message, Tick):
        return on_tick(state, message.now, ctx, message.resumed_at)
    handler = _HANDLERS.get(type(message))
    return [] if handler is None else handler(state, message, ctx)


def _on_bet_placed(state: DealerState, event: BetPlaced, ctx: DealerContext) -> list[Message]:
    # The round as the bet leaves it: the runtime folded the bet already, a test may not have.
    r = folded_round(state, event)
    if r is None or r.phase is not Phase.BET_PLACED or r.player_id != event.player_id:
        return []  # already dealt or closed, or a round id another player's bet already holds
    if r.malfunction_id is not None:  # the round broke before its bet arrived: never deal it
        return [void(r, ctx, r.malfunction_id, r.malfunction_reason)]
    # The session the round is played in: the player's open one at the table, or a new one.
    idle_s = event.idle_timeout_s or int(ctx.table.idle_timeout.total_seconds())
    session_id, started = open_for_bet(state, r, event.command_id, idle_s, ctx)
    # A forced deck (test mode, ADR 030) deals only a play-money round: a real-money round
    # is dealt from the CSPRNG's deck and leaves the player's forced deck pending.
    forced = state.forced.get(r.player_id) if ctx.test_mode and r.mode is Mode.FUN else None
    opened = opened_deck(r, ctx)
    if opened is not None:  # sealed, not dealt (a partial publish): deal it, never reshuffle
        was_forced = is_forced_deck(forced, opened.codes)
        return [*started, dealt(r, opened.codes, r.commitment, ctx, session_id, forced=was_forced)]
    return [*started, *seal_and_deal(r, ctx, session_id, forced)]


def _on_force(state: DealerState, command: ForceNextDeck, ctx: DealerContext) -> list[Message]:
    answered = state.answered(command.player_id, command.command_id)
    if answered == ("", FORCE_COMMAND):
        return []  # a redelivery or a resend: answered already
    if answered is not None:
        detail = f"command_id {command.command_id} was used for {answered[1]}"
        return [force_rejected(command, ForceRefusal.DUPLICATE, detail, ctx)]
    if not ctx.test_mode:
        detail = "this dealer is not in test mode: it deals every round from its CSPRNG"
        return [force_rejected(command, ForceRefusal.TEST_MODE_ONLY, detail, ctx)]
    return [deck_forced(command, ctx)]


def _on_decision(state: DealerState, command: Call | Fold, ctx: DealerContext) -> list[Message]:
    r = state.get(command.round_id)
    refusal = _reused(state, command)
    if refusal == _SAME:
        return []
    refusal = refusal or _early(state, command) or _refusal(r, command)
    if refusal is not None:
        return [rejected(command, *refusal, ctx)]
    assert r is not None  # _refusal refuses unknown rounds
    decision: Decision = "call" if isinstance(command, Call) else "fold"
    return reveal(r, decision, ctx, auto=False, command_id=command.command_id)


_SAME = (Reason.DUPLICATE, "")  # the very command again: already answered, answer nothing


def _reused(state: DealerState, command: Call | Fold | VoidRound) -> tuple[Reason, str] | None:
    """Whether the player used this command_id before: for this same command (a redelivery or
    a resend: nothing to answer) or for another one (refused as a duplicate)."""
    answered = state.answered(command.player_id, command.command_id)
    if answered is None:
        return None
    if answered == (command.round_id, command.type):
        return _SAME
    round_id, kind = answered
    return Reason.DUPLICATE, f"command_id {command.command_id} was used for {kind} on {round_id}"


def _early(state: DealerState, command: Call | Fold | VoidRound) -> tuple[Reason, str] | None:
    """A decision or a void sent right behind its bet, before the wallet placed it (ADR 024,
    issue 29): refused out_of_order, and the same command may be sent again once the round is
    dealt."""
    r = state.get(command.round_id)
    if (r is None or r.phase is None) and state.pending.get(command.player_id) == command.round_id:
        return (
            Reason.OUT_OF_ORDER,
            f"round {command.round_id} is not dealt yet: its bet is still with the wallet; "
            "send the command again (the same command_id) after its round.dealt",
        )
    return None


def _refusal(r: Round | None, command: Call | Fold | VoidRound) -> tuple[Reason, str] | None:
    """Why ``command`` cannot act on round ``r``, most fundamental reason first."""
    if r is None or r.phase is None:
        return Reason.UNKNOWN_ROUND, f"no round {command.round_id}"
    if r.player_id != command.player_id:
        return Reason.NOT_YOUR_ROUND, "the round belongs to another player"
    if r.phase in CLOSED:
        return Reason.ROUND_CLOSED, f"the round is {r.phase.value}"
    if isinstance(command, VoidRound):
        return None
    if r.phase in DECIDED:
        return Reason.ALREADY_DECIDED, f"the round is already {r.phase.value}"
    if r.malfunction_id is not None:  # voiding it is under way; a decision would race the void
        return Reason.ROUND_CLOSED, "the round has a malfunction"
    if r.phase is Phase.BET_PLACED:
        return (
            Reason.OUT_OF_ORDER,
            "the round is not dealt yet: send the command again (the same command_id) after "
            "its round.dealt",
        )
    return None


def _on_void(state: DealerState, command: VoidRound, ctx: DealerContext) -> list[Message]:
    r = state.get(command.round_id)
    refusal = _reused(state, command)
    if refusal == _SAME:
        return []
    refusal = refusal or _early(state, command) or _refusal(r, command)
    if refusal is not None:
        return [rejected(command, *refusal, ctx)]
    assert r is not None
    # For a decided round this is only the Malfunction: settlement owns it and voids it.
    return malfunction(r, ctx, "operator", command.reason, command.command_id)


def _on_malfunction(state: DealerState, event: Malfunction, ctx: DealerContext) -> list[Message]:
    r = folded_round(state, event)
    # Unknown: remembered, voided if its bet ever arrives. Decided: settlement's. Closed: done.
    if r is None or r.phase not in UNDECIDED or r.malfunction_id is None:
        return []
    return [void(r, ctx, r.malfunction_id, r.malfunction_reason)]


_HANDLERS: dict[type, Callable[[DealerState, Any, DealerContext], list[Message]]] = {
    BetPlaced: _on_bet_placed,
    Call: _on_decision,
    Fold: _on_decision,
    VoidRound: _on_void,
    Malfunction: _on_malfunction,
    EndSession: on_end_session,
    PlayerBlocked: on_player_blocked,  # the wallet's (ADR 028)
    ForceNextDeck: _on_force,
}
HANDLED = tuple(_HANDLERS)  # the message models decide answers


def bind(
    table: TimingRules,
    new_deck: DeckSource = no_deck_source,
    vault: Vault | None = None,
    test_mode: bool = False,
) -> Callable[[DealerState, Any, Context], list[Message]]:
    """``decide`` for one table and vault, taking the runtime's plain Context (the Spec's)."""

    def decide_at_table(state: DealerState, message: Any, ctx: Context) -> list[Message]:
        if not isinstance(ctx, DealerContext):
            ctx = DealerContext(
                now=ctx.now,
                cause_id=ctx.cause_id,
                correlation_id=ctx.correlation_id,
                seed=ctx.seed,
                table=table,
                new_deck=new_deck,
                vault=vault,
                test_mode=test_mode,
            )
        return decide(state, message, ctx)

    return decide_at_table
