"""The query service's fold of the rounds and wallet topics: per player, the balances and the
rounds as ``RoundView``s (open ones, and the last ``kept`` finished real-money ones).

Bounded per player (ADR 010): at most ``kept`` finished rounds (oldest go first), open rounds
(the dealer allows one per player; ``OPEN_KEPT`` caps a log that says otherwise), and
``EARLY_KEPT`` wallet facts of rounds whose BetPlaced has not been read yet (wallet and rounds
are two topics: a round's StakeTaken may be read before its BetPlaced). Fun rounds leave when
they end: only real-money rounds are kept. The number of players is what the wallet's ledger
holds too: one entry of balances each.

Promotions and protection (issue 29), per player too: his last ``CAMPAIGNS_KEPT`` free-hand
campaigns (the oldest with no hand left goes first, as in the wallet), his limits (one set per
currency, at most ``LIMITS_KEPT``), whether he is blocked, his open sessions (at most
``SESSIONS_KEPT``), and the keys of his last ``COUNTED_KEPT`` free-hand stakes and refunds
counted, so that a record read again (a replay overlapping the live read) is not counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from holdem.core.contracts import (
    BetPlaced,
    Called,
    Dealt,
    Folded,
    FreeHandsCancelled,
    FreeHandsExpired,
    FreeHandsGranted,
    LimitsSet,
    Mode,
    PlayerBlocked,
    PlayerUnblocked,
    RealityCheckAcknowledged,
    RoundView,
    RoundVoided,
    SessionEnded,
    SessionStarted,
    Settled,
    StakeTaken,
)
from holdem.core.contracts.promotions import FreeStakeRefunded, FreeStakeTaken
from holdem.core.contracts.protection import Limits
from holdem.core.contracts.queries import (
    CAMPAIGNS_KEPT,
    HISTORY_KEPT,
    LIMITS_KEPT,
    SESSIONS_KEPT,
    CampaignView,
    SessionView,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.rules import STANDARD
from holdem.core.verify import VerificationError, expected_settled

OPEN_KEPT: Final = 8
EARLY_KEPT: Final = 16
COUNTED_KEPT: Final = 64

Money = tuple[int | None, int | None]  # balance before the round, after its last movement


@dataclass(slots=True)
class Book:
    """One player: balances by (currency, mode) and rounds by id, oldest first."""

    balances: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    rounds: dict[str, RoundView] = field(default_factory=dict)
    early: dict[str, Money] = field(default_factory=dict)
    campaigns: dict[str, CampaignView] = field(default_factory=dict)  # oldest first
    counted: list[str] = field(default_factory=list)  # free-hand movements counted, oldest first
    limits: dict[str, Limits] = field(default_factory=dict)  # by currency, oldest set first
    blocked: tuple[str, datetime] | None = None  # the block's reason and time
    sessions: dict[str, SessionView] = field(default_factory=dict)  # by table, oldest first


@dataclass(slots=True)
class QueryState:
    """The books of the players of the assigned partitions; ``evolve`` updates it in place
    (``holdem.core.decider``), and a round view or balance in it is a frozen value."""

    books: dict[str, Book] = field(default_factory=dict)
    kept: int = HISTORY_KEPT

    def book(self, player_id: str) -> Book | None:
        return self.books.get(player_id)


def initial_state(kept: int = HISTORY_KEPT) -> QueryState:
    return QueryState(kept=kept)


def evolve(state: QueryState, event: object) -> QueryState:
    """Fold one rounds or wallet event; idempotent (the first of each event wins), others are
    ignored."""
    if isinstance(event, WalletEvent):
        player = state.books.setdefault(event.player_id, Book())
        _money(player, event)
        if isinstance(event, FreeStakeTaken | FreeStakeRefunded):
            _count_hand(player, event)
    elif isinstance(event, FreeHandsGranted | FreeHandsCancelled | FreeHandsExpired):
        _campaign(state.books.setdefault(event.player_id, Book()), event)
    elif isinstance(event, PROTECTION):
        _protection(state.books.setdefault(event.player_id, Book()), event)
    elif isinstance(event, BetPlaced):
        _placed(state, event)
    elif isinstance(event, Dealt | Called | Folded | Settled | RoundVoided):
        book = state.books.get(event.player_id)
        view = book.rounds.get(event.round_id) if book is not None else None
        if book is None or view is None:
            return state
        updated = _apply(view, event)
        if updated is not view:
            _store(state, book, updated)
    return state


def _placed(state: QueryState, bet: BetPlaced) -> None:
    book = state.books.setdefault(bet.player_id, Book())
    if bet.round_id in book.rounds:
        return
    before, after = book.early.pop(bet.round_id, (None, None))
    book.rounds[bet.round_id] = RoundView(
        round_id=bet.round_id,
        state="bet_placed",
        currency=bet.currency,
        mode=bet.mode,
        # A parallel branch adds the table to BetPlaced: read only when the model has it.
        table_id=getattr(bet, "table_id", None),
        table_version=getattr(bet, "table_version", None),
        # The pay table the bet was placed under (a round at no table: the standard one).
        pay_table=bet.pay_table or STANDARD.version,
        started_at=bet.occurred_at,
        ante=bet.ante,
        aa_bonus=bet.aa_bonus,
        total_bet=bet.ante + bet.aa_bonus,
        balance_before=before,
        balance_after=after,
    )
    trim(state, book)


def _apply(view: RoundView, event: Dealt | Called | Folded | Settled | RoundVoided) -> RoundView:
    if isinstance(event, Dealt) and view.state == "bet_placed":
        update: dict[str, object] = {
            "state": "dealt",
            "player_cards": event.player_cards,
            "flop": event.flop,
            "commitment": event.commitment,
            "session_id": event.session_id,  # Dealt v2 (ADR 020)
        }
        return view.model_copy(update=update)
    if isinstance(event, Called | Folded) and view.state == "dealt":
        called = isinstance(event, Called)
        call = STANDARD.call_multiple * view.ante if called else 0
        update = {
            "state": "decided",
            "decision": "call" if called else "fold",
            "auto": event.auto,
            "turn": event.turn,
            "river": event.river,
            "dealer_cards": event.dealer_cards,
            "deck": event.deck,
            "salt": event.salt,
            "call": call,
            "total_bet": view.ante + view.aa_bonus + call,
        }
        return view.model_copy(update=update)
    if isinstance(event, Settled) and view.state == "decided" and is_the_result(view, event):
        update = {
            "state": "settled",
            "ended_at": event.occurred_at,
            "result": event.result,
            "dealer_qualifies": event.dealer_qualifies,
            "player_category": event.player_category,
            "dealer_category": event.dealer_category,
            "ante_return": event.ante_return,
            "call_return": event.call_return,
            "bonus_return": event.bonus_return,
            "total_won": event.total_return,
            "pay_table": event.pay_table or STANDARD.version,
        }
        return view.model_copy(update=update)
    if isinstance(event, RoundVoided) and view.state != "voided":
        # Every stake taken goes back (the wallet's StakesRefunded); a settled round is voided
        # only when the wallet refused to pay it (ADR 008), and then its payout never was.
        update = {
            "state": "voided",
            "ended_at": event.occurred_at,
            "result": "voided",
            "void_reason": event.reason,
            "ante_return": view.ante,
            "call_return": view.call,
            "bonus_return": view.aa_bonus,
            "total_won": view.total_bet,
        }
        return view.model_copy(update=update)
    return view


def is_the_result(view: RoundView, settled: Settled) -> bool:
    """Whether ``settled`` is exactly what the rules give this round's revealed deck: a Settled
    is not believed because it is on the rounds topic."""
    if view.deck is None or view.salt is None or view.commitment is None or not view.decision:
        return False
    try:
        expected = expected_settled(
            deck=view.deck,
            salt=view.salt,
            commitment=view.commitment,
            currency=view.currency,
            mode=view.mode,
            ante=view.ante,
            aa_bonus=view.aa_bonus,
            decision=view.decision,
        )
    except VerificationError:
        return False
    for name, value in expected.items():
        got = getattr(settled, name)
        if got != value and not (name == "pay_table" and got is None):
            return False
    return True


def _store(state: QueryState, book: Book, view: RoundView) -> None:
    if view.finished and view.mode == Mode.FUN:
        del book.rounds[view.round_id]  # fun rounds are never kept once over
        return
    book.rounds[view.round_id] = view
    if view.finished:
        trim(state, book)


def trim(state: QueryState, book: Book) -> None:
    """Drop the oldest finished rounds beyond ``kept``, and the oldest open ones beyond
    ``OPEN_KEPT``."""
    finished = [rid for rid, view in book.rounds.items() if view.finished]
    for rid in finished[: max(len(finished) - state.kept, 0)]:
        del book.rounds[rid]
    still_open = [rid for rid, view in book.rounds.items() if not view.finished]
    for rid in still_open[: max(len(still_open) - OPEN_KEPT, 0)]:
        del book.rounds[rid]


def _money(book: Book, event: WalletEvent) -> None:
    """The balance after a movement; a round's balance before its stake and after its last."""
    book.balances[(event.currency, event.mode.value)] = (event.available, event.held)
    if event.round_id is None:
        return
    after = event.available + event.held
    view = book.rounds.get(event.round_id)
    before = view.balance_before if view is not None else book.early.get(event.round_id, (None,))[0]
    if isinstance(event, StakeTaken):
        before = after + event.amount
    elif isinstance(event, FreeStakeTaken):  # the promotion paid: the player's money is as it was
        before = after
    if view is not None:
        book.rounds[event.round_id] = view.model_copy(
            update={"balance_before": before, "balance_after": after}
        )
        return
    book.early[event.round_id] = (before, after)
    while len(book.early) > EARLY_KEPT:
        del book.early[next(iter(book.early))]


PROTECTION = (
    LimitsSet, PlayerBlocked, PlayerUnblocked, SessionStarted, SessionEnded,
    RealityCheckAcknowledged,
)  # fmt: skip


def _campaign(book: Book, event: FreeHandsGranted | FreeHandsCancelled | FreeHandsExpired) -> None:
    """A campaign granted (the first grant of an id wins), cancelled or expired (once)."""
    if isinstance(event, FreeHandsGranted):
        if event.campaign_id in book.campaigns:
            return
        book.campaigns[event.campaign_id] = CampaignView(
            campaign_id=event.campaign_id,
            table_id=event.table_id,
            currency=event.currency,
            ante=event.ante,
            aa_bonus=event.aa_bonus,
            hands=event.hands,
            remaining=event.hands,
            granted_at=event.occurred_at,
            expires_at=event.expires_at,
        )
        _forget_old_campaigns(book)
        return
    campaign = book.campaigns.get(event.campaign_id)
    if campaign is not None and campaign.status == "active":
        status = "cancelled" if isinstance(event, FreeHandsCancelled) else "expired"
        update = {"status": status, "remaining": 0, "ended_at": event.occurred_at}
        book.campaigns[event.campaign_id] = campaign.model_copy(update=update)


def _forget_old_campaigns(book: Book) -> None:
    """Beyond CAMPAIGNS_KEPT, the oldest campaigns with no hand left go (the wallet refuses a
    grant beyond 16 campaigns with hands left, so those always fit)."""
    over = len(book.campaigns) - CAMPAIGNS_KEPT
    if over <= 0:
        return
    for campaign_id in [c for c, view in book.campaigns.items() if view.remaining == 0][:over]:
        del book.campaigns[campaign_id]


def _count_hand(book: Book, event: FreeStakeTaken | FreeStakeRefunded) -> None:
    """A free hand played (its stakes taken) or given back (a void refunds them), once per
    wallet movement (its idempotency key: the wallet applies a key once, ever)."""
    campaign = book.campaigns.get(event.campaign_id)
    if campaign is None or event.idempotency_key in book.counted:
        return
    book.counted.append(event.idempotency_key)
    del book.counted[: max(len(book.counted) - COUNTED_KEPT, 0)]
    step = 1 if isinstance(event, FreeStakeTaken) else -1
    played = max(0, min(campaign.hands, campaign.played + step))
    remaining = campaign.hands - played if campaign.status == "active" else 0
    book.campaigns[event.campaign_id] = campaign.model_copy(
        update={"played": played, "remaining": remaining}
    )


def _protection(book: Book, event: object) -> None:
    """Limits (the latest set per currency), the block, the open sessions."""
    if isinstance(event, LimitsSet):
        book.limits.pop(event.limits.currency, None)  # the newest set last
        book.limits[event.limits.currency] = event.limits
        while len(book.limits) > LIMITS_KEPT:
            del book.limits[next(iter(book.limits))]
    elif isinstance(event, PlayerBlocked):
        book.blocked = (event.reason, event.occurred_at)
    elif isinstance(event, PlayerUnblocked):
        book.blocked = None
    elif isinstance(event, SessionStarted):
        current = book.sessions.get(event.table_id)
        if current is not None and current.session_id == event.session_id:
            return  # read again
        book.sessions.pop(event.table_id, None)
        book.sessions[event.table_id] = SessionView(
            session_id=event.session_id,
            table_id=event.table_id,
            mode=event.mode,
            started_at=event.occurred_at,
            checked_at=event.occurred_at,
        )
        while len(book.sessions) > SESSIONS_KEPT:
            del book.sessions[next(iter(book.sessions))]
    elif isinstance(event, SessionEnded):
        current = book.sessions.get(event.table_id)
        if current is not None and current.session_id == event.session_id:
            del book.sessions[event.table_id]
    elif isinstance(event, RealityCheckAcknowledged):
        current = book.sessions.get(event.table_id)
        if current is not None and current.session_id == event.session_id:
            checked = max(current.checked_at, event.occurred_at)
            book.sessions[event.table_id] = current.model_copy(update={"checked_at": checked})
