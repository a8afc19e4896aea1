"""Promotions (ADR 029): promotional credits, free-hand campaigns granted, cancelled, played and
expired. The promotion account pays; every movement names its campaign. Seamless mode shares
the campaigns and a free hand's stakes (``free_hand_of``, ``free_stakes``), not the credits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from holdem.core.contracts import (
    CallHeld,
    CancelFreeHands,
    Command,
    CreditPromo,
    FreeHandsCancelled,
    FreeHandsExpired,
    FreeHandsGranted,
    FreeStakeTaken,
    GrantFreeHands,
    Message,
    Mode,
    OperatorRefusal,
    PlayFreeHand,
    PromoCredited,
    PromoReason,
    PromoRejected,
    ProtectionRefusal,
    Reason,
)
from holdem.core.decider import Context
from holdem.core.errors import BetBelowMinimumError, NotChipsError
from holdem.core.limits import AdjustedBets, auto_adjust
from holdem.core.table_book import Table
from holdem.wallet.admission import (
    CALL_MULTIPLE,
    Refusal,
    Tables,
    Terms,
    bet_placed,
    table_terms,
)
from holdem.wallet.idempotency import already_decided, fingerprint
from holdem.wallet.ledger import Ledger
from holdem.wallet.protection import check_blocked, check_free_hand
from holdem.wallet.state import OPEN_CAMPAIGNS_MAX, Campaign, State

MAX_BALANCE = 10**15  # the contracts' Balance bound (as for a deposit)


class PromoRefusal(Exception):
    """A promotion command the wallet turns down, with a ``Reason`` or a ``PromoReason``."""

    def __init__(self, reason: Reason | PromoReason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


def promo_rejected(
    command: Any,
    ctx: Context,
    reason: Reason | PromoReason | OperatorRefusal | ProtectionRefusal,
    detail: str,
    refusal: Refusal | None = None,
) -> Message:
    """The refusal, to the operator and for the wallet's memory of the command id; a
    protection ``refusal`` (ADR 028) adds the limit or reality check it carries."""
    return PromoRejected(
        **ctx.envelope(command.player_id, getattr(command, "round_id", None)),
        command_id=command.command_id,
        command_type=command.type,
        campaign_id=command.campaign_id,
        reason=reason,
        detail=detail[:500],
        fingerprint=fingerprint(command),
        limit=None if refusal is None else refusal.limit,
        reality_check=None if refusal is None else refusal.reality_check,
    )


def promo_refused(command: Any, ctx: Context, refusal: Refusal | PromoRefusal) -> Message:
    """``promo_rejected`` for a caught refusal: an admission ``Refusal`` gives its bet reason
    (``player_blocked``, ``limit_reached``, ``reality_check`` for a PlayFreeHand, ADR 028)."""
    if isinstance(refusal, Refusal):
        return promo_rejected(command, ctx, refusal.bet_reason, refusal.detail, refusal)
    return promo_rejected(command, ctx, refusal.reason, refusal.detail)


def _guarded(
    handler: Callable[[State, Any, Context, Tables], list[Message]],
) -> Callable[[State, Any, Context, Tables], list[Message]]:
    """The handler, after the command-id checks (a resend answers nothing), its refusals
    written as ``PromoRejected``."""

    def guarded(state: State, command: Any, ctx: Context, tables: Tables) -> list[Message]:
        try:
            if already_decided(state, command, ctx):
                return []
            return handler(state, command, ctx, tables)
        except (Refusal, PromoRefusal) as refusal:
            return [promo_refused(command, ctx, refusal)]

    return guarded


@_guarded
def credit_promo(state: State, command: CreditPromo, ctx: Context, tables: Tables) -> list[Message]:
    """Promotion money to the player's real balance, outside any round."""
    key = (command.player_id, command.currency, Mode.REAL)
    if not tables.currencies.known(command.currency):
        raise PromoRefusal(Reason.UNSUPPORTED_CURRENCY, f"no currency {command.currency}")
    if state.account(key).available + command.amount > MAX_BALANCE:
        raise PromoRefusal(Reason.INVALID, f"the balance would exceed {MAX_BALANCE}")
    credit = Ledger(state, key, ctx).move(
        PromoCredited,
        f"promo:{command.command_id}",
        command.amount,
        None,
        command_id=command.command_id,
        fingerprint=fingerprint(command),
        campaign_id=command.campaign_id,
        reason=command.reason,
    )
    return [credit]


def _real_table(tables: Tables, table_id: str) -> Table:
    table = tables.book.get(table_id)
    if table is None:
        raise PromoRefusal(Reason.UNKNOWN_TABLE, f"no table {table_id}")
    if not table.open:
        raise PromoRefusal(Reason.TABLE_CLOSED, f"table {table_id} is closed")
    if table.terms.mode is not Mode.REAL:
        raise PromoRefusal(Reason.WRONG_MODE, "free hands are real-money rounds")
    return table


@_guarded
def grant(state: State, command: GrantFreeHands, ctx: Context, tables: Tables) -> list[Message]:
    """A campaign of ``hands`` free hands at a real-money table whose limits and chips take
    its ante and bonus exactly as they are (a free hand is never auto-adjusted)."""
    if command.expires_at <= ctx.now:
        raise PromoRefusal(Reason.INVALID, "expires_at is not in the future")
    if state.campaign(command.player_id, command.campaign_id) is not None:
        raise PromoRefusal(PromoReason.CAMPAIGN_EXISTS, f"campaign {command.campaign_id} exists")
    running = state.campaigns.get(command.player_id, {}).values()
    if sum(1 for c in running if c.remaining > 0) >= OPEN_CAMPAIGNS_MAX:
        raise PromoRefusal(
            PromoReason.TOO_MANY_CAMPAIGNS, f"{OPEN_CAMPAIGNS_MAX} campaigns with hands left"
        )
    table = _real_table(tables, command.table_id)
    try:
        bets = auto_adjust(command.ante, command.aa_bonus, table.limits)
    except BetBelowMinimumError as error:
        raise PromoRefusal(Reason.BELOW_MINIMUM, str(error)) from None
    except NotChipsError as error:
        raise PromoRefusal(Reason.NOT_CHIPS, str(error)) from None
    if bets.adjusted:
        detail = f"table {command.table_id} would adjust the bets to {bets.ante}/{bets.aa_bonus}"
        raise PromoRefusal(Reason.INVALID, detail)
    granted = FreeHandsGranted(
        **ctx.envelope(command.player_id),
        campaign_id=command.campaign_id,
        command_id=command.command_id,
        fingerprint=fingerprint(command),
        table_id=command.table_id,
        currency=table.terms.currency,
        hands=command.hands,
        ante=command.ante,
        aa_bonus=command.aa_bonus,
        expires_at=command.expires_at,
    )
    return [granted]


def _running(state: State, command: CancelFreeHands | PlayFreeHand, ctx: Context) -> Campaign:
    """The player's campaign if it still runs, else the refusal saying why not."""
    campaign = state.campaign(command.player_id, command.campaign_id)
    if campaign is None:
        raise PromoRefusal(PromoReason.UNKNOWN_CAMPAIGN, f"no campaign {command.campaign_id}")
    if campaign.status == "cancelled":
        raise PromoRefusal(PromoReason.CAMPAIGN_CANCELLED, f"{command.campaign_id} was cancelled")
    if campaign.status == "expired" or ctx.now >= campaign.expires_at:
        expired = campaign.expires_at.isoformat()
        raise PromoRefusal(PromoReason.CAMPAIGN_EXPIRED, f"{command.campaign_id} at {expired}")
    return campaign


@_guarded
def cancel(state: State, command: CancelFreeHands, ctx: Context, tables: Tables) -> list[Message]:
    """The campaign ends now; a hand being played finishes and is paid as usual."""
    campaign = _running(state, command, ctx)
    cancelled = FreeHandsCancelled(
        **ctx.envelope(command.player_id),
        campaign_id=command.campaign_id,
        command_id=command.command_id,
        fingerprint=fingerprint(command),
        remaining=campaign.remaining,
    )
    return [cancelled]


def free_hand_of(
    state: State, command: PlayFreeHand, ctx: Context, tables: Tables
) -> tuple[Campaign, Terms]:
    """The campaign and the table terms a free hand is played under, or the refusal saying why
    it cannot start (both modes; the funds for the call are checked by the caller). A blocked
    player plays none, and the player's limits count the call only, his own money (ADR 028)."""
    check_blocked(state, command)
    campaign = _running(state, command, ctx)
    if campaign.remaining == 0:
        played = f"{campaign.hands} of {campaign.hands} played"
        raise PromoRefusal(PromoReason.NO_FREE_HANDS, played)
    table = _real_table(tables, campaign.table_id)
    round_id, player_id = command.round_id, command.player_id
    if round_id in state.rounds:
        raise PromoRefusal(Reason.ROUND_EXISTS, f"round {round_id} already has a bet")
    if table.terms.currency != campaign.currency:
        raise PromoRefusal(Reason.UNSUPPORTED_CURRENCY, f"table plays {table.terms.currency}")
    open_round = state.open_rounds.get(player_id)
    if open_round is not None:
        raise PromoRefusal(Reason.ROUND_IN_PROGRESS, f"round {open_round} awaits its decision")
    terms = Terms(campaign.currency, Mode.REAL, table.limits, table_terms(table))
    check_free_hand(state, command, campaign.table_id, terms, CALL_MULTIPLE * campaign.ante)
    return campaign, terms


def free_stakes(
    command: PlayFreeHand,
    ctx: Context,
    bets: AdjustedBets,
    terms: Terms,
    digest: str,
    ledger: Ledger,
) -> list[Message]:
    """BetPlaced, FreeStakeTaken (the promotion pays ante and bonus to the house) and CallHeld
    (the player's call, 2 × ante, from his balance), each naming the campaign; ``digest``: the
    command's fingerprint, ``ledger``: the balances (seamless: after the operator's debit)."""
    round_id, campaign_id = command.round_id, command.campaign_id
    placed = bet_placed(command, ctx, bets, terms, (bets.ante, bets.aa_bonus))
    stake = ledger.move(
        FreeStakeTaken,
        f"stake:{round_id}",
        bets.ante + bets.aa_bonus,
        round_id,
        command_id=command.command_id,
        fingerprint=digest,
        campaign_id=campaign_id,
        ante=bets.ante,
        aa_bonus=bets.aa_bonus,
    )
    hold = ledger.move(
        CallHeld, f"hold:{round_id}", placed.call_hold, round_id, campaign_id=campaign_id
    )
    return [placed, stake, hold]


def expire_campaigns(state: State, ctx: Context) -> list[Message]:
    """On a tick: every campaign past its expiry with hands left expires, one event each, with
    ids derived from the campaign (decided again after a crash, it is recognisably one)."""
    events: list[Message] = []
    for player_id in sorted(state.campaigns):
        for campaign in state.campaigns[player_id].values():
            if campaign.remaining == 0 or ctx.now < campaign.expires_at:
                continue
            cause = f"free-hands-expired:{player_id}:{campaign.campaign_id}"
            envelope = Context(ctx.now, cause, seed=cause).envelope(player_id)
            events.append(
                FreeHandsExpired(
                    **envelope, campaign_id=campaign.campaign_id, remaining=campaign.remaining
                )
            )
    return events


def not_in_seamless(state: State, command: Command, ctx: Context) -> list[Message]:
    """Seamless mode: the operator's wallet holds the money; its promotions are its own."""
    try:
        if already_decided(state, command, ctx):
            return []
    except Refusal as refusal:
        return [promo_rejected(command, ctx, refusal.reason, refusal.detail)]
    detail = "seamless wallet: the operator's wallet pays promotions"
    return [promo_rejected(command, ctx, PromoReason.NOT_SUPPORTED, detail)]


_Handler: TypeAlias = Callable[[State, Any, Context, Tables], list[Message]]
PROMO_HANDLERS: dict[type[Message], _Handler] = {
    CreditPromo: credit_promo,
    GrantFreeHands: grant,
    CancelFreeHands: cancel,
}
