"""The wallet in seamless mode: the operator's replies (ADR 015). Every reply is checked against
the request it claims to answer; a Debited starts the round, a Credited or RolledBack closes it,
a refusal or a debit unanswered ends a bet that never started (moved out of ``seamless``)."""

from __future__ import annotations

from typing import Any

from holdem.core.contracts import (
    Message,
    OperatorRefusal,
    PlaceBet,
    PlayFreeHand,
    Reason,
    RoundClosed,
)
from holdem.core.contracts.seamless import (
    Credited,
    Debited,
    DebitRejected,
    DebitRejection,
    DebitRequested,
    ReplyRefusal,
    ReplyRefused,
    RollbackRequested,
    RolledBack,
    RoundClosedAcknowledged,
    RoundClosedNotice,
    SeamlessCredited,
    SeamlessDebited,
    SeamlessReply,
    SeamlessRolledBack,
)
from holdem.core.decider import Context
from holdem.core.limits import AdjustedBets, Adjustment
from holdem.wallet.admission import (
    PINNED,
    Refusal,
    Terms,
    take_stakes,
)
from holdem.wallet.idempotency import bet_refused, fingerprint
from holdem.wallet.ledger import Ledger
from holdem.wallet.promotions import (
    free_stakes,
)
from holdem.wallet.seamless_state import (
    Bridge,
    TxKind,
    tx_id,
)
from holdem.wallet.state import AccountKey, State

# The operator's refusal, one to one as the player's BetRejected (v3) reason; the operator's
# own code also leads the detail ("operator wallet: session_expired ...").
REJECTION_REASONS: dict[DebitRejection, Reason | OperatorRefusal] = {
    DebitRejection.INSUFFICIENT_FUNDS: Reason.INSUFFICIENT_FUNDS,
    DebitRejection.LIMIT_EXCEEDED: OperatorRefusal.LIMIT_EXCEEDED,
    DebitRejection.SESSION_EXPIRED: OperatorRefusal.SESSION_EXPIRED,
    DebitRejection.PLAYER_BLOCKED: OperatorRefusal.PLAYER_BLOCKED,
    DebitRejection.OTHER: OperatorRefusal.OPERATOR_REJECTED,
}
# wallet.rejected (v2), the wallet's memory of the same answer, has no codes for the
# operator's: there they are folded as BetRejected v2 folded them (ADR 015).
WALLET_REASONS: dict[DebitRejection, Reason] = {
    DebitRejection.INSUFFICIENT_FUNDS: Reason.INSUFFICIENT_FUNDS,
    DebitRejection.LIMIT_EXCEEDED: Reason.INSUFFICIENT_FUNDS,
    DebitRejection.SESSION_EXPIRED: Reason.INVALID,
    DebitRejection.PLAYER_BLOCKED: Reason.INVALID,
    DebitRejection.OTHER: Reason.INVALID,
}
_KINDS: dict[type[SeamlessReply], TxKind] = {
    Debited: "debit",
    DebitRejected: "debit",
    Credited: "credit",
    RolledBack: "rollback",
    RoundClosedAcknowledged: "close",
}


# --- the operator's replies -----------------------------------------------------------------


def on_reply(state: State, reply: SeamlessReply, ctx: Context) -> list[Message]:
    kind = _KINDS[type(reply)]
    bridge = state.bridges.of(reply.player_id, reply.round_id)
    if bridge is None or reply.tx_id != tx_id(reply.player_id, reply.round_id, kind):
        return [_refused(reply, ctx, ReplyRefusal.UNKNOWN_TRANSACTION, f"no {kind} {reply.tx_id}")]
    if isinstance(reply, RoundClosedAcknowledged):
        return _on_close_acknowledged(bridge, reply, ctx)
    expected = bridge.request.amount if kind == "credit" and bridge.request else bridge.debit.amount
    if (reply.amount, reply.currency) != (expected, bridge.debit.currency):
        detail = f"asked {expected} {bridge.debit.currency}, got {reply.amount} {reply.currency}"
        return [_refused(reply, ctx, ReplyRefusal.MISMATCH, detail)]
    if isinstance(reply, Debited | DebitRejected):
        return _on_debit_answer(state, bridge, reply, ctx)
    wanted = "crediting" if kind == "credit" else "rolling_back"
    done = "credited" if kind == "credit" else "rolled_back"
    if bridge.status == done:
        return []  # the same acknowledgement again
    if bridge.status != wanted:
        return [_refused(reply, ctx, ReplyRefusal.UNKNOWN_TRANSACTION, f"no {kind} was asked")]
    ledger = Ledger(state, _account(bridge), ctx)
    key, r = f"seamless_{done}:{bridge.round_id}", bridge.round_id
    if isinstance(reply, Credited):
        moved = ledger.move(SeamlessCredited, key, reply.amount, r, tx_id=reply.tx_id)
        return [moved, *_closed(state, bridge, reply, ctx)]
    assert isinstance(reply, RolledBack)
    # What the debit put in the ledger goes back out; a debit never applied put in nothing.
    taken = bridge.debit.amount if bridge.debit_applied else 0
    moved = ledger.move(SeamlessRolledBack, key, taken, r, tx_id=reply.tx_id)
    return [moved, *_closed(state, bridge, reply, ctx)]


def _closed(
    state: State, bridge: Bridge, reply: Credited | RolledBack, ctx: Context
) -> list[Message]:
    """The round's last movement is acknowledged: RoundClosed for the rounds topic and the
    notice to the operator's wallet (ADR 028); none for a debit that never placed a bet."""
    stake = state.round_of(bridge.player_id, bridge.round_id)
    if not bridge.debit_applied or stake is None:
        return []
    settled = isinstance(reply, Credited)
    released = stake.call_hold if stake.call == "released" else 0
    player_id, round_id, debit = bridge.player_id, bridge.round_id, bridge.debit
    returned = reply.amount - released if settled else stake.taken
    closed = RoundClosed(
        **ctx.envelope(player_id, round_id),
        outcome="settled" if settled else "voided",
        currency=debit.currency,
        mode=debit.mode,
        staked=stake.taken,
        returned=returned,
        net=returned - stake.taken,
    )
    notice = RoundClosedNotice(
        **ctx.envelope(player_id, round_id),
        tx_id=tx_id(player_id, round_id, "close"),
        currency=debit.currency,
        mode=debit.mode,
        amount=reply.amount,
        outcome=closed.outcome,
        debit_tx_id=debit.tx_id,
        final_tx_id=reply.tx_id,
    )
    return [closed, notice]


def _on_close_acknowledged(
    bridge: Bridge, reply: RoundClosedAcknowledged, ctx: Context
) -> list[Message]:
    """The operator received the notice: nothing to record; an acknowledgement of a round not
    closed, or of another amount, is refused like any reply that names no request."""
    final = bridge.request
    if bridge.status not in {"credited", "rolled_back"} or not bridge.debit_applied or not final:
        return [_refused(reply, ctx, ReplyRefusal.UNKNOWN_TRANSACTION, "the round is not closed")]
    if (reply.amount, reply.currency) != (final.amount, final.currency):
        detail = f"closed with {final.amount} {final.currency}, got {reply.amount} {reply.currency}"
        return [_refused(reply, ctx, ReplyRefusal.MISMATCH, detail)]
    return []


def _on_debit_answer(
    state: State, bridge: Bridge, reply: Debited | DebitRejected, ctx: Context
) -> list[Message]:
    if bridge.status == "debit_pending":
        if isinstance(reply, Debited) and bridge.player_id in state.protection.blocked:
            # Blocked while his debit was out (ADR 028): no round; the operator's money back.
            blocked = Refusal(
                Reason.INVALID, "the operator blocked the player", OperatorRefusal.PLAYER_BLOCKED
            )
            return unplaced(bridge, ctx, blocked)
        if isinstance(reply, Debited):
            return _apply_debit(state, bridge, ctx)
        detail = f"operator wallet: {reply.reason.value} {reply.detail}".strip()
        refusal = Refusal(
            WALLET_REASONS[reply.reason], detail[:500], REJECTION_REASONS[reply.reason]
        )
        return bet_refused(_bet_of(bridge.debit), ctx, refusal, bridge.debit.fingerprint)
    if bridge.debit_applied == isinstance(reply, Debited):
        return []  # the same answer again, or a refusal that the rollback made true
    detail = f"the debit is {bridge.status.replace('_', ' ')}: this answer changes nothing"
    return [_refused(reply, ctx, ReplyRefusal.SUPERSEDED, detail)]


def _apply_debit(state: State, bridge: Bridge, ctx: Context) -> list[Message]:
    debit = bridge.debit
    ledger = Ledger(state, _account(bridge), ctx)
    key = f"seamless_debited:{debit.round_id}"
    debited = ledger.move(SeamlessDebited, key, debit.amount, debit.round_id, tx_id=debit.tx_id)
    adjustments = []
    if debit.ante != debit.requested_ante:
        adjustments.append(Adjustment("ante", debit.requested_ante, debit.ante))
    if debit.aa_bonus != debit.requested_aa_bonus:
        adjustments.append(Adjustment("aa_bonus", debit.requested_aa_bonus, debit.aa_bonus))
    bets = AdjustedBets(debit.ante, debit.aa_bonus, tuple(adjustments))
    # A DebitRequested v1 has no idle_timeout_s: that session takes the dealer's (ADR 020).
    pinned = {n: getattr(debit, n, None) for n in PINNED if getattr(debit, n, None) is not None}
    terms = Terms(debit.currency, debit.mode, None, pinned)
    bet, asked = _bet_of(debit), (debit.requested_ante, debit.requested_aa_bonus)
    digest = debit.fingerprint or fingerprint(bet)
    if debit.campaign_id is not None:  # a free hand: played even if its campaign ended since
        free = _free_hand_of(debit)
        return [debited, *free_stakes(free, ctx, bets, terms, digest, ledger)]
    placed = take_stakes(state, bet, ctx, bets, terms, asked, digest, ledger)
    return [debited, *placed]


def _free_hand_of(debit: DebitRequested) -> PlayFreeHand:
    """The PlayFreeHand the debit was asked for."""
    assert debit.campaign_id is not None
    return PlayFreeHand(**_origin(debit), campaign_id=debit.campaign_id)


def _origin(debit: DebitRequested) -> dict[str, Any]:
    """The envelope of the command the debit was asked for."""
    return {
        "event_id": debit.causation_id or debit.event_id,
        "command_id": debit.command_id,
        "player_id": debit.player_id,
        "round_id": debit.round_id,
        "occurred_at": debit.occurred_at,
    }


def _bet_of(debit: DebitRequested) -> PlaceBet:
    """The PlaceBet the debit was asked for, as the wallet admitted it."""
    return PlaceBet(
        **_origin(debit),
        currency=debit.currency,
        mode=debit.mode,
        ante=debit.requested_ante,
        aa_bonus=debit.requested_aa_bonus,
        table_id=debit.table_id,
    )


def _refused(reply: SeamlessReply, ctx: Context, reason: ReplyRefusal, detail: str) -> Message:
    return ReplyRefused(
        **ctx.envelope(reply.player_id, reply.round_id),
        reply_id=reply.event_id,
        reply_type=str(getattr(reply, "type", "")),
        tx_id=reply.tx_id,
        reason=reason,
        detail=detail[:500],
    )


def unplaced(bridge: Bridge, own: Context, refusal: Refusal) -> list[Message]:
    """The debit rolled back and the bet refused: the round never starts."""
    debit = bridge.debit
    rollback = RollbackRequested(
        **own.envelope(debit.player_id, debit.round_id),
        tx_id=tx_id(debit.player_id, debit.round_id, "rollback"),
        currency=debit.currency,
        mode=debit.mode,
        amount=debit.amount,
        debit_tx_id=debit.tx_id,
        campaign_id=debit.campaign_id,
    )
    return [rollback, *bet_refused(_bet_of(debit), own, refusal, debit.fingerprint)]


def _account(bridge: Bridge) -> AccountKey:
    return (bridge.player_id, bridge.debit.currency, bridge.debit.mode)
