"""The wallet's state (accounts, house, round stakes, applied keys, the evidence of open rounds,
the seamless bridges, the rebets, the promotion account and the free-hand campaigns) and its
fold, in place (``holdem.core.decider``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Literal, TypeAlias

from pydantic import NonNegativeInt

from holdem.core.cards import parse_cards
from holdem.core.contracts import (
    BetPlaced,
    CallCaptured,
    Called,
    CallHeld,
    CallReleased,
    Dealt,
    Folded,
    FundsDeposited,
    FundsWithdrawn,
    Message,
    Mode,
    PayoutCredited,
    SessionEnded,
    SessionStarted,
    StakesRefunded,
    StakeTaken,
    WalletRejected,
)
from holdem.core.contracts.promotions import (
    FreeHandsCancelled,
    FreeHandsExpired,
    FreeHandsGranted,
    FreeStakeRefunded,
    FreeStakeTaken,
    PromoCredited,
    PromoRejected,
)
from holdem.core.contracts.protection import ProtectionEvent
from holdem.core.contracts.seamless import SeamlessCredited, SeamlessDebited, SeamlessRolledBack
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.decider import ByClass
from holdem.core.deck import verify_commitment
from holdem.wallet.protection_state import Protection, fold_protection
from holdem.wallet.seamless_state import Bridges

# What the wallet remembers of a player's past (ADR 010), so that its state does not grow with
# history: his last CLOSED_KEPT paid or refunded rounds and his last COMMANDS_KEPT command ids,
# with the idempotency keys applied for them: a key is forgotten with its round or command, never
# before (decide would then publish a movement that evolve skips) nor after (a new round or
# command reusing the id would be skipped). A command older than the forgotten ones is refused
# (decide.py), so no command is ever applied twice.
CLOSED_KEPT: Final = 256
COMMANDS_KEPT: Final = 512
# ":<round_id>" (a free hand's stake is "stake:" too; its refund to the promotion "free-refund:")
ROUND_KEYS: Final = ("stake", "hold", "capture", "release", "payout", "refund", "free-refund")
COMMAND_KEYS: Final = ("deposit", "withdraw", "grant", "reset", "reset-grant", "promo")
# Free-hand campaigns per player (ADR 029): open ones (active with hands left) are bounded by
# the grant's refusal, and every campaign, open or over, is kept among his last CAMPAIGNS_KEPT.
OPEN_CAMPAIGNS_MAX: Final = 16
CAMPAIGNS_KEPT: Final = 64
REBET_TABLES_KEPT: Final = 16  # tables per player whose last requested bets Rebet can repeat
# How far ahead of the wallet's clock a command's occurred_at may be: it bounds the time of every
# command the wallet remembers, which is what makes the window above safe (decide.py).
CLOCK_AHEAD: Final = timedelta(seconds=10)

AccountKey: TypeAlias = tuple[str, str, Mode]  # (player_id, currency, mode)
HouseKey: TypeAlias = tuple[str, Mode]  # (currency, mode)
PlayerKey: TypeAlias = tuple[str, str]  # (player_id, command_id or idempotency key)
CallState = Literal["none", "held", "captured", "released"]
RoundStatus = Literal["open", "paid", "refunded"]
CampaignStatus = Literal["active", "cancelled", "expired"]


@dataclass(slots=True)
class Account:
    """A player's money in one currency and mode, in minor units."""

    available: NonNegativeInt = 0
    held: NonNegativeInt = 0


@dataclass(slots=True)
class Stake:
    """What one round took from its player, and where the call amount is now."""

    player_id: str
    currency: str
    mode: Mode
    ante: NonNegativeInt
    aa_bonus: NonNegativeInt
    call_hold: NonNegativeInt = 0
    call: CallState = "none"
    status: RoundStatus = "open"
    paid_by: str | None = None  # the Settled whose payout closed it (a resend of it is silent)
    campaign_id: str | None = None  # a free hand: the campaign that paid ante and bonus

    @property
    def account(self) -> AccountKey:
        return (self.player_id, self.currency, self.mode)

    @property
    def free_stake(self) -> int:
        """What the promotion paid for this round (a free hand's ante and bonus), else 0."""
        return self.ante + self.aa_bonus if self.campaign_id is not None else 0

    @property
    def taken(self) -> int:
        """What the house holds of the player's own stakes: ante, bonus (unless the promotion
        paid them) and a captured call."""
        stakes = self.ante + self.aa_bonus - self.free_stake
        return stakes + (self.call_hold if self.call == "captured" else 0)


@dataclass(slots=True)
class Campaign:
    """One free-hand campaign of a player: what each hand is, how many were played (a voided
    hand is given back), and whether it still runs."""

    campaign_id: str
    table_id: str
    currency: str
    ante: NonNegativeInt
    aa_bonus: NonNegativeInt
    hands: NonNegativeInt
    expires_at: datetime
    played: NonNegativeInt = 0
    status: CampaignStatus = "active"

    @property
    def remaining(self) -> int:
        return self.hands - self.played if self.status == "active" else 0


@dataclass(slots=True)
class Evidence:
    """What the rounds topic proves about an open round: the commitment of its first Dealt and
    the first decision whose revealed deck verifies against it (nothing else can be paid on)."""

    commitment: str | None = None
    reveal: Called | Folded | None = None
    # A reveal before any deal (never the dealer's order): nothing revealed later is trusted,
    # so folding the same records twice (a replay overlapping the live read) gives one state.
    unverifiable: bool = False


@dataclass(slots=True)
class State:
    """Everything the wallet knows, folded from the wallet topic.

    ``evolve`` updates it in place, as every service's state (``holdem.core.decider``): replay
    folds the whole log, and copying every map per event would make it quadratic. ``decide``
    never mutates it.
    Command ids and idempotency keys are scoped by player: they are client-chosen. The three
    per-player lists give, oldest first, the order in which rounds closed, command ids were
    answered (with the time of the answer) and keys were applied: the oldest beyond the bound
    is forgotten. ``horizon``: the answer time of the player's newest forgotten command.
    """

    accounts: dict[AccountKey, Account] = field(default_factory=dict)
    house: dict[HouseKey, int] = field(default_factory=dict)
    rounds: dict[str, Stake] = field(default_factory=dict)  # open, or among the last closed
    open_rounds: dict[str, str] = field(default_factory=dict)  # player_id -> undecided round
    applied: set[PlayerKey] = field(default_factory=set)
    commands: dict[PlayerKey, str] = field(default_factory=dict)  # -> fingerprint of the body
    evidence: dict[PlayerKey, Evidence] = field(default_factory=dict)  # (player, round): open
    closed: dict[str, list[str]] = field(default_factory=dict)
    answered: dict[str, list[tuple[str, datetime]]] = field(default_factory=dict)
    horizon: dict[str, datetime] = field(default_factory=dict)
    bridges: Bridges = field(default_factory=Bridges)  # seamless mode only (ADR 015)
    # player_id -> table_id -> (ante, aa_bonus) last asked for there (Rebet), newest last
    rebets: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    protection: Protection = field(default_factory=Protection)  # limits, blocks (ADR 028)
    # The promotion account per (currency, mode): what promotions paid out, net (never > 0).
    promo: dict[HouseKey, int] = field(default_factory=dict)
    # player_id -> campaign_id -> campaign, oldest first (ADR 029)
    campaigns: dict[str, dict[str, Campaign]] = field(default_factory=dict)

    def campaign(self, player_id: str, campaign_id: str) -> Campaign | None:
        return self.campaigns.get(player_id, {}).get(campaign_id)

    def evidence_of(self, player_id: str, round_id: str | None) -> Evidence:
        return self.evidence.get((player_id, round_id or ""), Evidence())

    def account(self, key: AccountKey) -> Account:
        """The account's balances; an account never seen is empty."""
        return self.accounts.get(key, Account())

    def round_of(self, player_id: str, round_id: str | None) -> Stake | None:
        """The stake of ``round_id`` if it belongs to ``player_id``, else None."""
        stake = self.rounds.get(round_id) if round_id is not None else None
        return stake if stake is not None and stake.player_id == player_id else None


def initial_state() -> State:
    """The state before any event: no accounts, no rounds."""
    return State()


# How each movement changes (available, held, house), per unit of its amount.
DELTAS: dict[type[WalletEvent], tuple[int, int, int]] = {
    FundsDeposited: (1, 0, 0),
    FundsWithdrawn: (-1, 0, 0),
    StakeTaken: (-1, 0, 1),
    CallHeld: (-1, 1, 0),
    CallCaptured: (0, -1, 1),
    CallReleased: (1, -1, 0),
    PayoutCredited: (1, 0, -1),
    StakesRefunded: (1, 0, -1),
    # Seamless mode (ADR 015): the account holds money in transit to and from the operator.
    SeamlessDebited: (1, 0, 0),
    SeamlessCredited: (-1, 0, 0),
    SeamlessRolledBack: (-1, 0, 0),
    # Promotions (ADR 029): the promotion account pays (PROMO_DELTAS), the player or the house gets.
    PromoCredited: (1, 0, 0),
    FreeStakeTaken: (0, 0, 1),
    FreeStakeRefunded: (0, 0, -1),
}
PROMO_DELTAS: dict[type[WalletEvent], int] = {
    PromoCredited: -1,
    FreeStakeTaken: -1,
    FreeStakeRefunded: 1,
}


def evolve(state: State, event: Message) -> State:
    """Fold one wallet event, or the Dealt/Called/Folded that prove a round's deck, into
    ``state``; a key already applied, or any other message, changes nothing."""
    _fold_of(event)(state, event)
    return state


def _ignore(state: State, event: object) -> None:
    """Any other message changes nothing."""


def _fold_bet(state: State, event: BetPlaced) -> None:
    _remember_bets(state, event)
    known = state.round_of(event.player_id, event.round_id)
    fold_protection(state.protection, event, free=0 if known is None else known.free_stake)


def _fold_session(state: State, event: SessionStarted | SessionEnded) -> None:
    stake = state.round_of(event.player_id, event.round_id)
    # a session's first round has taken the player's own stakes (not a free hand's)
    first = None if stake is None else (stake.currency, stake.taken)
    fold_protection(state.protection, event, first)


def _fold_protection_answer(state: State, event: ProtectionEvent) -> None:
    # Its own record on the rounds topic comes back as an input: fold a command's once.
    if (event.player_id, event.command_id) not in state.commands:
        _remember_command(state, event.player_id, event.command_id, event)
        fold_protection(state.protection, event)


def _fold_rejection(state: State, event: WalletRejected | PromoRejected) -> None:
    _remember_command(state, event.player_id, event.command_id, event)


def _fold_move(state: State, event: WalletEvent) -> None:
    """A money movement, applied once per (player, idempotency key)."""
    applied = (event.player_id, event.idempotency_key)
    if applied in state.applied:
        return
    state.applied.add(applied)
    _move(state, event)
    fold_protection(state.protection, event)
    if event.command_id is not None:
        _remember_command(state, event.player_id, event.command_id, event)
    _track_round(state, event)


def _remember_bets(state: State, event: BetPlaced) -> None:
    """What Rebet repeats: the bets the player last asked for at this table, whatever became
    of that round (won, lost, folded or voided)."""
    if event.table_id is None:
        return
    tables = state.rebets.setdefault(event.player_id, {})
    tables.pop(event.table_id, None)
    tables[event.table_id] = (event.requested_ante, event.requested_aa_bonus)
    while len(tables) > REBET_TABLES_KEPT:
        del tables[next(iter(tables))]


def _remember_command(
    state: State,
    player_id: str,
    command_id: str,
    event: WalletEvent
    | WalletRejected
    | PromoRejected
    | FreeHandsGranted
    | FreeHandsCancelled
    | ProtectionEvent,
) -> None:
    if (player_id, command_id) in state.commands:
        return
    state.commands[(player_id, command_id)] = event.fingerprint or ""
    order = state.answered.setdefault(player_id, [])
    order.append((command_id, event.occurred_at))
    if len(order) > COMMANDS_KEPT:
        old, at = order.pop(0)
        del state.commands[(player_id, old)]
        state.applied.difference_update((player_id, f"{kind}:{old}") for kind in COMMAND_KEYS)
        state.horizon[player_id] = max(at, state.horizon.get(player_id, at))


def _forget_old_rounds(state: State, player_id: str, round_id: str) -> None:
    """Note that the round closed; the player's closed round beyond the last CLOSED_KEPT goes."""
    order = state.closed.setdefault(player_id, [])
    order.append(round_id)
    if len(order) > CLOSED_KEPT:
        old = order.pop(0)
        stake = state.round_of(player_id, old)
        if stake is not None and stake.status != "open":
            del state.rounds[old]
            state.applied.difference_update((player_id, f"{kind}:{old}") for kind in ROUND_KEYS)


def _move(state: State, event: WalletEvent) -> None:
    d_available, d_held, d_house = DELTAS[type(event)]
    key = (event.player_id, event.currency, event.mode)
    account = state.accounts.setdefault(key, Account())
    account.available += d_available * event.amount
    account.held += d_held * event.amount
    if d_house:
        house = (event.currency, event.mode)
        state.house[house] = state.house.get(house, 0) + d_house * event.amount
    d_promo = PROMO_DELTAS.get(type(event), 0)
    if d_promo:
        book = (event.currency, event.mode)
        state.promo[book] = state.promo.get(book, 0) + d_promo * event.amount


def _track_round(state: State, event: WalletEvent) -> None:
    round_id = event.round_id
    if round_id is None:
        return
    change = _round_change(event)
    if change is None:  # a stake taken: the round is open
        _open_round(state, event, round_id)  # type: ignore[arg-type]
        return
    stake = state.round_of(event.player_id, round_id)
    if stake is None:
        return
    was_open = stake.status == "open"
    change(state, stake, event)
    if was_open and stake.status != "open":
        state.evidence.pop((event.player_id, round_id), None)
        _forget_old_rounds(state, event.player_id, round_id)
    if stake.call in {"captured", "released"} or stake.status != "open":
        _close(state, event.player_id, round_id)


def _open_round(state: State, event: StakeTaken | FreeStakeTaken, round_id: str) -> None:
    new = Stake(event.player_id, event.currency, event.mode, event.ante, event.aa_bonus)
    if isinstance(event, FreeStakeTaken):
        new.campaign_id = event.campaign_id
        _count_hand(state, event.player_id, event.campaign_id, 1)
    state.rounds[round_id] = new
    state.open_rounds[event.player_id] = round_id


def _hand_back(state: State, stake: Stake, event: FreeStakeRefunded) -> None:
    _count_hand(state, event.player_id, event.campaign_id, -1)


def _held(state: State, stake: Stake, event: CallHeld) -> None:
    stake.call_hold, stake.call = event.amount, "held"


def _captured(state: State, stake: Stake, event: CallCaptured) -> None:
    stake.call = "captured"


def _released(state: State, stake: Stake, event: CallReleased) -> None:
    stake.call = "released"


def _paid(state: State, stake: Stake, event: PayoutCredited) -> None:
    stake.status, stake.paid_by = "paid", event.causation_id


def _refunded(state: State, stake: Stake, event: StakesRefunded) -> None:
    stake.status = "refunded"


def _unchanged(state: State, stake: Stake, event: WalletEvent) -> None:
    """Any other movement of the round leaves its stake as it is."""


def _gather(state: State, event: Dealt | Called | Folded) -> None:
    """Keep what a payout will be checked against; the first record of each kind wins, and a
    reveal counts only if its deck and salt open the commitment (a forger has neither)."""
    stake = state.round_of(event.player_id, event.round_id)
    if stake is not None and stake.status != "open":
        return  # replayed after the round ended: nothing left to check
    evidence = state.evidence.setdefault((event.player_id, event.round_id), Evidence())
    if isinstance(event, Dealt):
        evidence.commitment = evidence.commitment or event.commitment
    elif evidence.commitment is None:
        evidence.unverifiable = True
    elif evidence.reveal is None and not evidence.unverifiable:
        salt = bytes.fromhex(event.salt)
        deck = parse_cards(event.deck)
        if verify_commitment(deck, salt, evidence.commitment):
            evidence.reveal = event


def _close(state: State, player_id: str, round_id: str) -> None:
    """The player's round is decided or over: the seat is free for the next one."""
    if state.open_rounds.get(player_id) == round_id:
        del state.open_rounds[player_id]


def _count_hand(state: State, player_id: str, campaign_id: str, played: int) -> None:
    """A free hand of the campaign taken (1) or given back by a void (-1)."""
    campaign = state.campaign(player_id, campaign_id)
    if campaign is not None:
        campaign.played = max(0, min(campaign.hands, campaign.played + played))


def _fold_campaign(
    state: State, event: FreeHandsGranted | FreeHandsCancelled | FreeHandsExpired
) -> None:
    """A campaign granted (once: the first grant of an id wins), cancelled or expired."""
    player = state.campaigns.setdefault(event.player_id, {})
    if isinstance(event, FreeHandsGranted):
        _remember_command(state, event.player_id, event.command_id, event)
        if event.campaign_id in player:
            return
        player[event.campaign_id] = Campaign(
            event.campaign_id,
            event.table_id,
            event.currency,
            event.ante,
            event.aa_bonus,
            event.hands,
            event.expires_at,
        )
        _forget_old_campaigns(state, player)
        return
    if isinstance(event, FreeHandsCancelled):
        _remember_command(state, event.player_id, event.command_id, event)
    campaign = player.get(event.campaign_id)
    if campaign is not None and campaign.status == "active":
        campaign.status = "cancelled" if isinstance(event, FreeHandsCancelled) else "expired"


def _forget_old_campaigns(state: State, player: dict[str, Campaign]) -> None:
    """Beyond CAMPAIGNS_KEPT, the player's oldest campaign with no hand left to play goes (an
    open one never does: the grant refuses more than OPEN_CAMPAIGNS_MAX of those)."""
    if len(player) <= CAMPAIGNS_KEPT:
        return
    for campaign_id, campaign in player.items():
        if campaign.remaining == 0:
            del player[campaign_id]
            return


# The branch of ``evolve`` for each message class (chosen once per class, in this order).
_fold_of: ByClass[Callable[[State, Any], None]] = ByClass(
    [
        (Dealt | Called | Folded, _gather),
        (BetPlaced, _fold_bet),
        (SessionStarted | SessionEnded, _fold_session),
        (ProtectionEvent, _fold_protection_answer),
        (WalletRejected | PromoRejected, _fold_rejection),
        (FreeHandsGranted | FreeHandsCancelled | FreeHandsExpired, _fold_campaign),
        (WalletEvent, _fold_move),
    ],
    _ignore,
)
# What a movement does to its round's stake, by class (None: it takes the stake, opening it).
_round_change: ByClass[Callable[[State, Stake, Any], None] | None] = ByClass(
    [
        (StakeTaken | FreeStakeTaken, None),
        (FreeStakeRefunded, _hand_back),
        (CallHeld, _held),
        (CallCaptured, _captured),
        (CallReleased, _released),
        (PayoutCredited, _paid),
        (StakesRefunded, _refunded),
    ],
    _unchanged,
)
