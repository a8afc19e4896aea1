"""The wallet in seamless mode (ADR 015): the operator's wallet holds the money, ours bridges to it.

A bet is admitted as in transfer mode (limits, auto-adjust) but its stakes are asked of the
operator in one DebitRequested; the round starts (BetPlaced, StakeTaken, CallHeld) only once the
operator's Debited is checked against it. The round ends in one CreditRequested (Settled) or one
RollbackRequested (RoundVoided, or a debit unanswered by its deadline), re-sent with the same
tx_id until acknowledged. Every reply is checked against the request it claims to answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from holdem.core.contracts import (
    CallReleased,
    CreditPromo,
    Deposit,
    Envelope,
    Message,
    PayoutCredited,
    PlaceBet,
    PlayFreeHand,
    Reason,
    Rebet,
    RoundVoided,
    Settled,
    StakesRefunded,
    Withdraw,
)
from holdem.core.contracts.seamless import (
    CreditRequested,
    DebitRequested,
    RollbackRequested,
    SeamlessReply,
)
from holdem.core.decider import Context
from holdem.core.limits import AdjustedBets
from holdem.wallet.admission import (
    CALL_MULTIPLE,
    Refusal,
    Tables,
    Terms,
)
from holdem.wallet.bets import Bet, place_bet, play_free_hand
from holdem.wallet.decide import decide
from holdem.wallet.idempotency import already_decided, fingerprint, wallet_rejected
from holdem.wallet.promotions import (
    expire_campaigns,
    not_in_seamless,
)
from holdem.wallet.seamless_replies import on_reply, unplaced
from holdem.wallet.seamless_state import (
    OUTSTANDING_MAX,
    Bridge,
    Request,
    fold_bridge,
    tx_id,
)
from holdem.wallet.state import Campaign, State, evolve


@dataclass(frozen=True)
class Timing:
    """How long a debit may wait for its answer, and how often an unanswered credit or
    rollback is sent again."""

    debit_timeout: timedelta = timedelta(seconds=10)
    retry_after: timedelta = timedelta(seconds=5)


def evolve_seamless(state: State, event: Message) -> State:
    """The transfer-mode fold, plus the bridges: the requests the wallet sent, the answers it
    recorded; a bridge forgotten takes its idempotency keys with it."""
    evolve(state, event)
    state.applied.difference_update(fold_bridge(state.bridges, event))
    return state


def bind_seamless(
    tables: Tables, timing: Timing
) -> Callable[[State, Envelope, Context], list[Envelope]]:
    mode = OperatorDebit(timing)

    def decide_seamless(state: State, message: Envelope, ctx: Context) -> list[Envelope]:
        if not isinstance(message, Message):  # the admin's table commands
            return decide(state, message, ctx, tables=tables)
        if isinstance(message, PlaceBet | Rebet):
            return list(place_bet(state, message, ctx, tables, mode))
        if isinstance(message, Deposit | Withdraw):
            return list(_no_transfers(state, message, ctx))
        if isinstance(message, PlayFreeHand):
            return list(play_free_hand(state, message, ctx, tables, mode))
        if isinstance(message, CreditPromo):
            return list(not_in_seamless(state, message, ctx))
        if isinstance(message, SeamlessReply):
            return list(on_reply(state, message, ctx))
        events = decide(state, message, ctx, tables=tables, closes=False)
        if isinstance(message, Settled | RoundVoided):
            events += _end_round(state, message, [e for e in events if isinstance(e, Message)], ctx)
        return events

    return decide_seamless


def on_tick(state: State, ctx: Context, timing: Timing) -> list[Message]:
    """Roll back the debits unanswered past their deadline; send again the credits and
    rollbacks unacknowledged for ``timing.retry_after``."""
    events: list[Message] = []
    for round_id in sorted(state.bridges.open):  # sorted: the same state gives the same events
        bridge = state.bridges.rounds[round_id]
        if bridge.status == "debit_pending" and ctx.now >= bridge.debit.expires_at:
            events += _expire(state, bridge, ctx)
        elif (
            bridge.request is not None
            and bridge.sent_at is not None
            and ctx.now >= bridge.sent_at + timing.retry_after
        ):
            events.append(_resend(bridge.request, ctx))
    return events + expire_campaigns(state, ctx)


def _resend(request: Request, ctx: Context) -> Request:
    """The same request (its tx_id, cause and correlation), as a new record of this tick."""
    cause = request.causation_id or request.event_id
    seed = f"resend/{request.tx_id}/{ctx.now.isoformat()}"
    envelope = Context(ctx.now, cause, request.correlation_id, seed=seed).envelope(
        request.player_id, request.round_id
    )
    return type(request).model_validate({**request.model_dump(), **envelope})


# --- commands -------------------------------------------------------------------------------


def _answered(state: State, command: PlaceBet | Rebet | PlayFreeHand, ctx: Context) -> bool:
    """True if the command was answered or its debit is waiting (a resend); raise Refusal if
    the round or the seat is taken at the bridge."""
    player_id, round_id = command.player_id, command.round_id
    if already_decided(state, command, ctx):
        return True
    bridge = state.bridges.rounds.get(round_id)
    if bridge is not None:
        if bridge.player_id == player_id and bridge.debit.fingerprint == fingerprint(command):
            return True  # sent again while its debit waits: the debit answers both
        raise Refusal(Reason.ROUND_EXISTS, f"round {round_id} already has a bet")
    pending = state.bridges.pending.get(player_id)
    if pending is not None:
        raise Refusal(Reason.ROUND_IN_PROGRESS, f"round {pending} awaits the operator's debit")
    if state.bridges.outstanding(player_id) >= OUTSTANDING_MAX:
        detail = f"{OUTSTANDING_MAX} rounds await the operator's acknowledgement"
        raise Refusal(Reason.ROUND_IN_PROGRESS, detail)
    return False


class OperatorDebit:
    """Seamless mode's last step of a bet: one DebitRequested to the operator's wallet (ante +
    bonus + the call hold, or a free hand's call hold alone); the round starts once its
    Debited is checked against it."""

    funds = False  # the operator's wallet checks its own balance

    def __init__(self, timing: Timing) -> None:
        self.timing = timing

    def answered(self, state: State, command: Bet, ctx: Context) -> bool:
        return _answered(state, command, ctx)

    def stake(
        self,
        state: State,
        command: PlaceBet | Rebet,
        ctx: Context,
        terms: Terms,
        bets: AdjustedBets,
        asked: tuple[int, int],
    ) -> list[Message]:
        return [_debit(command, ctx, self.timing, terms, bets, asked, None)]

    def free_stake(
        self, state: State, command: PlayFreeHand, ctx: Context, terms: Terms, campaign: Campaign
    ) -> list[Message]:
        """The operator's wallet is asked for the player's part only, the call hold, naming
        the campaign (ADR 029): the promotion pays ante and bonus on our side."""
        bets = AdjustedBets(campaign.ante, campaign.aa_bonus)
        asked = (campaign.ante, campaign.aa_bonus)
        return [_debit(command, ctx, self.timing, terms, bets, asked, campaign.campaign_id)]


def _debit(
    command: PlaceBet | Rebet | PlayFreeHand,
    ctx: Context,
    timing: Timing,
    terms: Terms,
    bets: AdjustedBets,
    asked: tuple[int, int],
    campaign_id: str | None,
) -> DebitRequested:
    """The one debit of an admitted bet: ante + bonus + the call hold, or for a free hand the
    call hold alone (the promotion pays the rest on our side)."""
    call_hold = CALL_MULTIPLE * bets.ante
    own = 0 if campaign_id is not None else bets.ante + bets.aa_bonus
    return DebitRequested(
        **ctx.envelope(command.player_id, command.round_id),
        tx_id=tx_id(command.player_id, command.round_id, "debit"),
        currency=terms.currency,
        mode=terms.mode,
        amount=own + call_hold,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
        call_hold=call_hold,
        command_id=command.command_id,
        requested_ante=asked[0],
        requested_aa_bonus=asked[1],
        fingerprint=fingerprint(command),
        expires_at=ctx.now + timing.debit_timeout,
        campaign_id=campaign_id,
        **terms.pinned,
    )


def _no_transfers(state: State, command: Deposit | Withdraw, ctx: Context) -> list[Message]:
    try:
        if already_decided(state, command, ctx):
            return []
        raise Refusal(
            Reason.INVALID, "seamless wallet: the operator's wallet holds the money, not this one"
        )
    except Refusal as refusal:
        return [wallet_rejected(command, ctx, refusal)]


# --- the end of a round ---------------------------------------------------------------------


def _end_round(
    state: State, message: Settled | RoundVoided, events: list[Message], ctx: Context
) -> list[Message]:
    """One credit when the wallet paid a Settled, one rollback when it refunded a void."""
    bridge = state.bridges.of(message.player_id, message.round_id)
    if bridge is None or bridge.status != "debited":
        return []
    player_id, round_id, debit = bridge.player_id, bridge.round_id, bridge.debit
    common = {
        "currency": debit.currency,
        "mode": debit.mode,
        "debit_tx_id": debit.tx_id,
        "campaign_id": debit.campaign_id,
    }
    if isinstance(message, Settled):
        paid = [e for e in events if isinstance(e, PayoutCredited)]
        if not paid:
            return []  # refused (ADR 008): nothing to pay yet
        # The call hold the player did not use comes back with the payout, in one credit.
        released = sum(e.amount for e in events if isinstance(e, CallReleased))
        stake = state.round_of(player_id, round_id)
        if stake is not None and stake.call == "released":
            released += stake.call_hold
        credit = tx_id(player_id, round_id, "credit")
        amount = paid[0].amount + released
        return [
            CreditRequested(
                **ctx.envelope(player_id, round_id), tx_id=credit, amount=amount, **common
            )
        ]
    if not any(isinstance(e, StakesRefunded) for e in events):
        return []
    rollback = tx_id(player_id, round_id, "rollback")
    envelope = ctx.envelope(player_id, round_id)
    return [RollbackRequested(**envelope, tx_id=rollback, amount=debit.amount, **common)]


def _expire(state: State, bridge: Bridge, ctx: Context) -> list[Message]:
    """The debit's deadline passed unanswered: roll it back and refuse the bet (ids derive from
    the debit, so the same expiry decided twice is recognisably one)."""
    debit = bridge.debit
    own = Context(ctx.now, debit.event_id, debit.correlation_id, seed=f"expire/{debit.tx_id}")
    timeout = Refusal(
        Reason.PROCESSING_FAILED, "operator wallet: timeout, the debit is rolled back"
    )
    return unplaced(bridge, own, timeout)
