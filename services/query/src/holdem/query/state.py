"""The query service's fold of the rounds and wallet topics: per player, the balances and the
rounds as ``RoundView``s (open ones, and the last ``kept`` finished real-money ones).

Bounded per player (ADR 010): at most ``kept`` finished rounds (oldest go first), open rounds
(the dealer allows one per player; ``OPEN_KEPT`` caps a log that says otherwise), and
``EARLY_KEPT`` wallet facts of rounds whose BetPlaced has not been read yet (wallet and rounds
are two topics: a round's StakeTaken may be read before its BetPlaced). Fun rounds leave when
they end: only real-money rounds are kept. The number of players is what the wallet's ledger
holds too: one entry of balances each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from holdem.core.contracts import (
    BetPlaced,
    Called,
    Dealt,
    Folded,
    Mode,
    RoundView,
    RoundVoided,
    Settled,
    StakeTaken,
)
from holdem.core.contracts.promotions import FreeStakeTaken
from holdem.core.contracts.queries import HISTORY_KEPT
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.rules import STANDARD
from holdem.core.verify import VerificationError, expected_settled

OPEN_KEPT: Final = 8
EARLY_KEPT: Final = 16

Money = tuple[int | None, int | None]  # balance before the round, after its last movement


@dataclass(slots=True)
class Book:
    """One player: balances by (currency, mode) and rounds by id, oldest first."""

    balances: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    rounds: dict[str, RoundView] = field(default_factory=dict)
    early: dict[str, Money] = field(default_factory=dict)


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
        _money(state.books.setdefault(event.player_id, Book()), event)
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
