"""One bet pipeline for both of the wallet's modes (issue 27 item 6). A PlaceBet, a Rebet or a
PlayFreeHand goes through the same checks in either mode: its command id, a block, the table's
terms, the limits (auto-adjust), the player's own limits, and for a free hand its campaign.
Only the last step is the mode's (``WalletMode``): ``Transfer`` takes the stakes on our ledger;
``seamless.OperatorDebit`` asks the operator's wallet for them in one DebitRequested (ADR 015)."""

from __future__ import annotations

from typing import Protocol

from holdem.core.contracts import Message, Mode, PlaceBet, PlayFreeHand, Reason, Rebet
from holdem.core.decider import Context
from holdem.core.limits import AdjustedBets
from holdem.wallet.admission import (
    CALL_MULTIPLE,
    Refusal,
    Tables,
    Terms,
    admit,
    requested,
    take_stakes,
    terms_of,
)
from holdem.wallet.idempotency import already_decided, bet_refused, fingerprint
from holdem.wallet.ledger import Ledger
from holdem.wallet.promotions import PromoRefusal, free_hand_of, free_stakes, promo_refused
from holdem.wallet.protection import check_bet, check_blocked
from holdem.wallet.state import Campaign, State

Bet = PlaceBet | Rebet | PlayFreeHand


class WalletMode(Protocol):
    """Where a bet's money is: what the pipeline leaves to the mode."""

    @property
    def funds(self) -> bool:
        """The player's balance is ours to check (the operator checks its own)."""

    def answered(self, state: State, command: Bet, ctx: Context) -> bool:
        """The command was answered already (or its answer is on its way); raise Refusal when
        it must be refused before any other check."""

    def stake(
        self,
        state: State,
        command: PlaceBet | Rebet,
        ctx: Context,
        terms: Terms,
        bets: AdjustedBets,
        asked: tuple[int, int],
    ) -> list[Message]:
        """The last step of an admitted bet; ``asked``: the ante and bonus the player asked."""

    def free_stake(
        self, state: State, command: PlayFreeHand, ctx: Context, terms: Terms, campaign: Campaign
    ) -> list[Message]:
        """The last step of a free hand the campaign admitted; may raise PromoRefusal."""


class Transfer:
    """Transfer mode: the money is ours; the stakes are taken on our ledger at once."""

    funds = True

    def answered(self, state: State, command: Bet, ctx: Context) -> bool:
        return already_decided(state, command, ctx)

    def stake(
        self,
        state: State,
        command: PlaceBet | Rebet,
        ctx: Context,
        terms: Terms,
        bets: AdjustedBets,
        asked: tuple[int, int],
    ) -> list[Message]:
        return take_stakes(state, command, ctx, bets, terms, asked, fingerprint(command))

    def free_stake(
        self, state: State, command: PlayFreeHand, ctx: Context, terms: Terms, campaign: Campaign
    ) -> list[Message]:
        """The promotion pays ante and bonus to the house; the player's call (2 × ante) is held
        from his own balance as for any bet."""
        call_hold = CALL_MULTIPLE * campaign.ante
        ledger = Ledger(state, (command.player_id, campaign.currency, Mode.REAL), ctx)
        if ledger.available < call_hold:
            raise PromoRefusal(
                Reason.INSUFFICIENT_FUNDS,
                f"the call needs {call_hold}, available {ledger.available}",
            )
        bets = AdjustedBets(campaign.ante, campaign.aa_bonus)
        return free_stakes(command, ctx, bets, terms, fingerprint(command), ledger)


TRANSFER = Transfer()


def place_bet(
    state: State, command: PlaceBet | Rebet, ctx: Context, tables: Tables, mode: WalletMode
) -> list[Message]:
    """A PlaceBet or a Rebet: admitted once for both modes, then the mode's last step."""
    try:
        if mode.answered(state, command, ctx):
            return []
        check_blocked(state, command)
        terms = terms_of(command, tables)
        asked = requested(state, command)
        bets = admit(state, command, terms, asked, funds=mode.funds)
        check_bet(state, command, terms, bets)
    except Refusal as refusal:
        return bet_refused(command, ctx, refusal)
    return mode.stake(state, command, ctx, terms, bets, asked[1:])


def play_free_hand(
    state: State, command: PlayFreeHand, ctx: Context, tables: Tables, mode: WalletMode
) -> list[Message]:
    """A free hand (ADR 029): the campaign's bets, checked once for both modes, then the
    mode's last step; a refusal is a PromoRejected."""
    try:
        if mode.answered(state, command, ctx):
            return []
        campaign, terms = free_hand_of(state, command, ctx, tables)
        return mode.free_stake(state, command, ctx, terms, campaign)
    except (Refusal, PromoRefusal) as refusal:
        return [promo_refused(command, ctx, refusal)]
