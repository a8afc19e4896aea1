"""The money half of the audit: balances recomputed from amounts, conservation (the promotion
account included, ADR 029), stakes ended, free hands paid by their campaign's rules."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    CallCaptured,
    Called,
    CallHeld,
    CallReleased,
    FundsDeposited,
    FundsWithdrawn,
    PayoutCredited,
    RoundVoided,
    Settled,
    StakesRefunded,
    StakeTaken,
)
from holdem.core.contracts.promotions import FreeStakeRefunded, FreeStakeTaken, PromoCredited
from holdem.core.contracts.seamless import SeamlessCredited, SeamlessDebited, SeamlessRolledBack
from holdem.core.contracts.wallet import WalletEvent
from holdem.harness.audit_log import Record, RoundKey, RoundLog
from holdem.harness.audit_window import KEPT, Window

AccountKey = tuple[str, str, str]  # (player_id, currency, mode)
Balances = Mapping[AccountKey, tuple[int, int]]  # -> (available, held)

# Where each movement takes its amount from and puts it, written from the money rules of
# docs/services-design.md ("Money (wallet)")
# (not imported from the wallet: the audit must not share the code it audits).
MOVES: dict[type[WalletEvent], tuple[int, int, int]] = {  # (available, held, house)
    FundsDeposited: (1, 0, 0),
    FundsWithdrawn: (-1, 0, 0),
    StakeTaken: (-1, 0, 1),
    CallHeld: (-1, 1, 0),
    CallCaptured: (0, -1, 1),
    CallReleased: (1, -1, 0),
    PayoutCredited: (1, 0, -1),
    StakesRefunded: (1, 0, -1),
    # Seamless mode (ADR 015): money in from the operator's wallet, and back out to it.
    SeamlessDebited: (1, 0, 0),
    SeamlessCredited: (-1, 0, 0),
    SeamlessRolledBack: (-1, 0, 0),
    # Promotions (ADR 029): paid from the promotion account (PROMOTION) to the player or house.
    PromoCredited: (1, 0, 0),
    FreeStakeTaken: (0, 0, 1),
    FreeStakeRefunded: (0, 0, -1),
}
# The promotion account's side of a movement: it starts at 0 and only pays (never above 0).
PROMOTION: dict[type[WalletEvent], int] = {
    PromoCredited: -1,
    FreeStakeTaken: -1,
    FreeStakeRefunded: 1,
}
# What comes from outside the game's books (+) or leaves them (-).
OUTSIDE = {
    FundsDeposited: 1,
    FundsWithdrawn: -1,
    SeamlessDebited: 1,
    SeamlessCredited: -1,
    SeamlessRolledBack: -1,
}


Book = tuple[str, str]  # (currency, mode)
BOOK_SUMS = ("players", "house", "promotion", "outside")  # what conservation adds per book


def money_violations(
    records: Iterable[Record], rounds: Mapping[RoundKey, RoundLog], balances: Balances | None
) -> list[str]:
    ordered = sorted(records, key=lambda r: (r.partition, r.offset))
    events = [
        r.message for r in ordered if r.role == "wallet" and isinstance(r.message, WalletEvent)
    ]
    watch = MoneyWatch()
    for event in events:
        watch.feed(event)
    found = watch.finish()
    found += conservation_violations(watch.books())
    if balances is not None:
        found += final_violations(watch.accounts, balances)
    found += round_money_violations(events, rounds)
    return found


def _name(event: WalletEvent) -> str:
    return str(getattr(event, "type", type(event).__name__))


def no_money() -> list[int]:
    """A new account's (available, held): a named factory, so a checkpoint can pickle it."""
    return [0, 0]


class MoneyWatch:
    """The money audit one wallet event at a time (each player's events in partition order):
    every balance recomputed from the amounts, the promotion account, each idempotency key
    applied once (an exact window of the latest keys), and the sums conservation adds up per
    book. The whole audit and the streaming one both use it."""

    # The types ``feed`` acts on: every wallet event (see ForcedWatch.READS).
    READS: tuple[type, ...] = (WalletEvent,)

    def __init__(self, kept: int = KEPT) -> None:
        self.accounts: dict[AccountKey, list[int]] = defaultdict(no_money)
        self.house: dict[Book, int] = defaultdict(int)
        self.promotion: dict[Book, int] = defaultdict(int)
        self.outside: dict[Book, int] = defaultdict(int)
        self.reported: dict[AccountKey, int] = {}  # each account's last available + held
        self.found: list[str] = []
        self.keys: Window[tuple[str, str], int] = Window(kept, self._key_left)

    def feed(self, event: WalletEvent) -> None:
        # Each field read once and the balance compared in place: it runs for every wallet record.
        cls, player, amount = type(event), event.player_id, event.amount
        key = (player, event.idempotency_key)
        keys = self.keys
        keys.put(key, (keys.get(key) or 0) + 1)
        d_available, d_held, d_house = MOVES[cls]
        currency, mode = event.currency, str(event.mode)
        book, account = (currency, mode), (player, currency, mode)
        balance = self.accounts[account]
        balance[0] += d_available * amount
        balance[1] += d_held * amount
        self.house[book] += d_house * amount
        self.outside[book] += OUTSIDE.get(cls, 0) * amount
        available, held = event.available, event.held
        self.reported[account] = available + held
        if available != balance[0] or held != balance[1]:
            self.found.append(
                f"{player}: {_name(event)} {event.idempotency_key} reports "
                f"{(available, held)}, the amounts give {tuple(balance)}"
            )
        if balance[0] < 0 or balance[1] < 0:
            self.found.append(f"{player}: balance {tuple(balance)} < 0 after {_name(event)}")
        # The promotion account starts at 0 and only pays: it may never take in more than it
        # paid out (a refund of a free stake it did not pay).
        sign = PROMOTION.get(cls, 0)
        if sign:
            self.promotion[book] += sign * amount
            if self.promotion[book] > 0:
                self.found.append(
                    f"promotion account {book} at {self.promotion[book]} > 0 after {_name(event)}"
                )

    def _key_left(self, key: tuple[str, str], count: int) -> None:
        if count > 1:
            self.found.append(f"{key[0]}: idempotency key {key[1]} applied {count} times")

    def finish(self) -> list[str]:
        """What was found, the keys still in the window judged too."""
        self.keys.drain()
        return self.found

    def books(self) -> dict[Book, dict[str, int]]:
        """Per (currency, mode): the players' last reported balances, the house, the promotion
        account and what came from outside; books of several partitions add up."""
        players: dict[Book, int] = defaultdict(int)
        for (_, currency, mode), total in self.reported.items():
            players[(currency, mode)] += total
        sums = {"players": players, "house": self.house, "promotion": self.promotion}
        sums["outside"] = self.outside
        found = set(players) | set(self.house) | set(self.promotion) | set(self.outside)
        return {book: {name: sums[name].get(book, 0) for name in BOOK_SUMS} for book in found}


def add_books(
    into: dict[Book, dict[str, int]], more: Mapping[Book, Mapping[str, int]]
) -> dict[Book, dict[str, int]]:
    for book, sums in more.items():
        mine = into.setdefault(book, dict.fromkeys(BOOK_SUMS, 0))
        for name in BOOK_SUMS:
            mine[name] += sums.get(name, 0)
    return into


def conservation_violations(books: Mapping[Book, Mapping[str, int]]) -> list[str]:
    """Players' available + held + house + promotion = deposits − withdrawals, per currency
    and mode (the promotion account is what promotions paid, as a negative balance)."""
    found = []
    for book in sorted(books):
        s = books[book]
        if s["players"] + s["house"] + s["promotion"] != s["outside"]:
            found.append(
                f"money not conserved in {book}: players {s['players']} + house {s['house']}"
                f" + promotion {s['promotion']} != deposits - withdrawals {s['outside']}"
            )
    return found


def final_violations(accounts: Mapping[AccountKey, list[int]], balances: Balances) -> Iterator[str]:
    for key in sorted(set(accounts) | set(balances)):
        expected = tuple(accounts.get(key, [0, 0]))
        if tuple(balances.get(key, (0, 0))) != expected:
            yield f"{key}: wallet state {balances.get(key)} but the events give {expected}"


def round_money_violations(
    events: list[WalletEvent], rounds: Mapping[RoundKey, RoundLog]
) -> Iterator[str]:
    by_round: dict[RoundKey, list[WalletEvent]] = defaultdict(list)
    for event in events:
        # Seamless transfers are the bridge's to audit (audit_seamless): a timed-out debit
        # is rolled back for a round that never had a BetPlaced.
        if event.round_id is not None and type(event) not in OUTSIDE:
            by_round[(event.player_id, event.round_id)].append(event)
    for key, moved in sorted(by_round.items()):
        log = rounds.get(key)
        if log is None or not log.bets:
            yield f"{'/'.join(key)}: money moved for a round without a BetPlaced"
            continue
        yield from (f"{'/'.join(key)}: {v}" for v in _one_round(log, moved))
    for key, log in sorted(rounds.items()):
        if log.bets and key not in by_round:
            yield f"{'/'.join(key)}: BetPlaced but no stake was taken"


def _one_round(log: RoundLog, moved: list[WalletEvent]) -> Iterator[str]:
    bet, round_id = log.bets[0], log.bets[0].round_id
    amounts = _amounts_by_type(moved)
    free = [e for e in moved if isinstance(e, FreeStakeTaken)]
    taken = amounts[FreeStakeTaken] if free else amounts[StakeTaken]
    if taken != [bet.ante + bet.aa_bonus] or amounts[CallHeld] != [bet.call_hold]:
        yield f"stake {taken} / hold {amounts[CallHeld]} do not match the BetPlaced"
    if free and amounts[StakeTaken]:
        yield "a free hand's stakes were also taken from the player"
    campaign = free[0].campaign_id if free else None
    named = {_campaign(e) for e in moved}
    if named != {campaign}:
        yield f"its movements name campaigns {sorted(map(str, named))}, its stake {campaign}"
    wrong_keys = [k for e in moved if (k := e.idempotency_key).rpartition(":")[2] != round_id]
    if wrong_keys:
        yield f"idempotency keys not derived from the round: {wrong_keys}"
    if not log.ends:
        return
    called = bool(log.decisions) and isinstance(log.decisions[0][1], Called)
    captured, released = amounts[CallCaptured], amounts[CallReleased]
    if (captured, released) != (([bet.call_hold], []) if called else ([], [bet.call_hold])):
        yield f"call hold captured {captured} released {released}, decision call={called}"
    own = 0 if free else bet.ante + bet.aa_bonus
    yield from _ending(log.ends[0], own + sum(captured), amounts, bet if free else None)


def _ending(
    end: Settled | RoundVoided,
    taken: int,
    amounts: Mapping[Any, list[int]],
    free: BetPlaced | None,
) -> Iterator[str]:
    """``taken``: the player's own money in the round; ``free``: the bet of a free hand."""
    paid, refunded = amounts[PayoutCredited], amounts[StakesRefunded]
    back = amounts[FreeStakeRefunded]
    if isinstance(end, Settled):
        expected_paid = [end.total_return if free is None else _winnings(end, free)]
        if paid != expected_paid or refunded or back:  # a lost round is closed by a payout of 0
            yield f"Settled total {end.total_return} but paid {paid}, refunded {refunded}"
    elif refunded != [taken] or paid:
        yield f"voided with {taken} taken but refunded {refunded}, paid {paid}"
    elif free is not None and back != [free.ante + free.aa_bonus]:
        yield f"free hand voided but {back} of {free.ante + free.aa_bonus} back to the promotion"


def _winnings(end: Settled, bet: BetPlaced) -> int:
    """A free hand pays what its ante and bonus won beyond their stakes, and the whole return
    of the call (the player's own money): ADR 029, recomputed here from the Settled."""
    ante = end.ante_return - bet.ante if end.ante_return > bet.ante else 0
    bonus = end.bonus_return - bet.aa_bonus if end.bonus_return > bet.aa_bonus else 0
    return ante + bonus + end.call_return


# Whether a movement's type declares a campaign (ADR 029), found once per type: a field a model
# lacks, read with ``getattr(e, "campaign_id", None)``, goes through pydantic's ``__getattr__``
# and an AttributeError (about 5 µs, once a round for its StakeTaken). A model has no attribute
# its type does not declare: no contract allows extra fields.
_DECLARES_CAMPAIGN: dict[type, bool] = {}


def _campaign(event: Any) -> Any:
    """``getattr(event, "campaign_id", None)``, asked only of the types that declare it."""
    cls = type(event)
    declared = _DECLARES_CAMPAIGN.get(cls)
    if declared is None:
        fields = getattr(cls, "model_fields", {})
        declared = _DECLARES_CAMPAIGN[cls] = "campaign_id" in fields or hasattr(cls, "campaign_id")
    return getattr(event, "campaign_id", None) if declared else None


def _amounts_by_type(moved: list[WalletEvent]) -> dict[Any, list[int]]:
    amounts: dict[Any, list[int]] = defaultdict(list)
    for event in moved:
        amounts[type(event)].append(event.amount)
    return amounts
