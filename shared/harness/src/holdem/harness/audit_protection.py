"""The player-protection and round-closed half of the audit (ADR 028): every round that took a
stake closes once, after its last money movement and with what the ledger says it took and gave
back; in seamless mode its notice to the operator's wallet goes once, after the operator's last
answer; a blocked player places no bet until unblocked, and his sessions open at the block end.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from holdem.core.contracts import (
    BetPlaced,
    Message,
    PayoutCredited,
    PlayerBlocked,
    PlayerUnblocked,
    RoundClosed,
    SessionEnded,
    SessionStarted,
    StakesRefunded,
    StakeTaken,
)
from holdem.core.contracts.promotions import FreeStakeTaken
from holdem.core.contracts.seamless import (
    RoundClosedNotice,
    SeamlessCredited,
    SeamlessDebited,
    SeamlessRolledBack,
)
from holdem.core.contracts.wallet import WalletEvent

Key = tuple[str, str]  # (player_id, round_id)


def protection_violations(records: Iterable[Any]) -> list[str]:
    """Broken round-closed and blocking invariants, as sentences (``records``: the audit's)."""
    ordered = sorted(
        (r for r in records if r.message is not None),
        key=lambda r: (r.role, r.partition, r.offset),
    )
    return [*closed_violations(ordered), *_block_violations(ordered)]


# What a message's type is to a round's closing, worked out once per type (an ``isinstance``
# that misses a pydantic model costs a few hundred ns).
_CLOSING: dict[type, str] = {}


def closing_part(cls: type) -> str:
    """The part ("closed", "notice", "move": a wallet event) a message of type ``cls`` is,
    "other" for any other player's message, "" for what is not a player's message."""
    if not issubclass(cls, Message):
        return ""
    if issubclass(cls, RoundClosed):
        return "closed"
    if issubclass(cls, RoundClosedNotice):
        return "notice"
    return "move" if issubclass(cls, WalletEvent) else "other"


# The operator's last answers to a round's debit. A tuple: ``isinstance`` of a union built at
# each call costs about 1 µs more.
FINALS = (SeamlessCredited, SeamlessRolledBack)


def closed_violations(records: list[Any]) -> Iterator[str]:
    """Every round's closing against its money (``records``: sorted by role, partition, offset;
    one round's records judge that round)."""
    closed: dict[Key, list[Any]] = defaultdict(list)
    notices: dict[Key, list[Any]] = defaultdict(list)
    moves: dict[Key, list[Any]] = defaultdict(list)
    for r in records:
        m = r.message
        cls = type(m)
        part = _CLOSING.get(cls)
        if part is None:
            part = _CLOSING[cls] = closing_part(cls)
        if not part or m.round_id is None:
            continue
        key = (m.player_id, m.round_id)
        if part == "closed":
            closed[key].append(r)
        elif part == "notice":
            notices[key].append(r)
        elif part == "move":
            moves[key].append(r)
    for key in sorted(set(closed) | set(moves) | set(notices)):
        name, found, money = "/".join(key), closed.get(key, []), moves.get(key, [])
        kinds = {type(r.message) for r in money}
        if StakeTaken not in kinds and FreeStakeTaken not in kinds:  # a free hand's: ADR 029
            if found or notices.get(key):
                yield f"{name}: closed, but it took no stake"
            continue
        seamless = SeamlessDebited in kinds
        finals = [r for r in money if isinstance(r.message, FINALS)]
        ended = PayoutCredited in kinds or StakesRefunded in kinds
        finished = bool(finals) if seamless else ended
        if len(found) > 1:
            yield f"{name}: closed {len(found)} times"
        if finished and not found:
            yield f"{name}: its last money movement is not followed by a round.closed"
        if found and not finished:
            yield f"{name}: closed before its last money movement"
        if found and finished:
            yield from _closed_matches(name, found[0], money)
        if seamless:
            yield from _notice_violations(name, notices.get(key, []), finals, bool(found))
        elif notices.get(key):
            yield f"{name}: a transfer-mode round's closing was notified to an operator's wallet"


def _closed_matches(name: str, closed: Any, money: list[Any]) -> Iterator[str]:
    """After every movement of the round (Kafka's timestamps order the two topics, written in
    one transaction), and with the amounts the ledger moved of the player's own money: a free
    hand's stake is the promotion's (``wallet.free_stake_taken``, ADR 029), counted by the
    money audit's promotion account, so it stakes its captured call only."""
    message: RoundClosed = closed.message
    late = [r for r in money if r.timestamp > closed.timestamp]
    if late:
        yield f"{name}: {late[0].message.type} after its round.closed"
    amounts: dict[str, int] = {}  # a plain dict: a Counter's constructor costs more than the sums
    for r in money:
        m = r.message
        amounts[m.type] = amounts.get(m.type, 0) + m.amount
    refunded = amounts.get("wallet.stakes_refunded", 0)
    taken = amounts.get("wallet.stake_taken", 0) + amounts.get("wallet.call_captured", 0)
    if message.outcome == "voided":
        taken = refunded  # a captured call is refunded with the stakes
    returned = amounts.get("wallet.payout_credited", 0) + refunded
    if (message.staked, message.returned) != (taken, returned):
        yield (
            f"{name}: closed with staked {message.staked}, returned {message.returned}; "
            f"the ledger says {taken}, {returned}"
        )


def _notice_violations(
    name: str, notices: list[Any], finals: list[Any], closed: bool
) -> Iterator[str]:
    """The operator's notice: once per closed round, on the wallet topic after the record of
    the operator's last answer (one partition: offsets order them)."""
    if len(notices) != (1 if closed else 0):
        yield f"{name}: the operator's wallet was told {len(notices)} times that the round closed"
    for notice in notices[:1]:
        if not finals or any(f.offset > notice.offset for f in finals):
            yield f"{name}: the round-closed notice precedes the operator's last answer"


def _block_violations(records: list[Any]) -> Iterator[str]:
    """On the rounds topic (one partition per player: its order is the decision order)."""
    watch = BlockWatch()
    for r in records:
        if r.role == "rounds":
            watch.feed(r.message)
    yield from watch.finish()


class BlockWatch:
    """The blocking audit one rounds record at a time: a blocked player places no bet until
    unblocked, and every session he had open when blocked ends. Holds each player's block and
    open sessions only."""

    # The types ``feed`` acts on (see ForcedWatch.READS).
    READS: tuple[type, ...] = (
        PlayerBlocked, PlayerUnblocked, BetPlaced, SessionStarted, SessionEnded,
    )  # fmt: skip

    def __init__(self) -> None:
        self.blocked: set[str] = set()
        self.sessions: dict[str, set[str]] = defaultdict(set)  # player -> his open sessions
        self.waiting: dict[str, set[str]] = defaultdict(set)  # player -> sessions to end
        self.found: list[str] = []

    def feed(self, m: Any) -> None:
        if isinstance(m, PlayerBlocked):
            self.blocked.add(m.player_id)
            self.waiting[m.player_id] |= self.sessions.get(m.player_id, set())
        elif isinstance(m, PlayerUnblocked):
            self.blocked.discard(m.player_id)
        elif isinstance(m, BetPlaced) and m.player_id in self.blocked:
            self.found.append(
                f"{m.player_id}/{m.round_id}: bet placed while the player was blocked"
            )
        elif isinstance(m, SessionStarted):
            self.sessions[m.player_id].add(m.session_id)
        elif isinstance(m, SessionEnded):
            self.sessions[m.player_id].discard(m.session_id)
            self.waiting[m.player_id].discard(m.session_id)
            for held in (self.sessions, self.waiting):
                if not held[m.player_id]:
                    del held[m.player_id]

    def finish(self) -> list[str]:
        for player, left in sorted(self.waiting.items()):
            for session in sorted(left):
                self.found.append(
                    f"{player}: session {session} stayed open after the player was blocked"
                )
        self.waiting.clear()
        return self.found
