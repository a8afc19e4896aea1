"""What each message of the game's log becomes in the reporting tables, gathered per poll batch.

A ``Batch`` takes the records of one poll in log order and keeps the writes they imply, merged
per row (a round bet, dealt, decided and settled in one batch is one INSERT); ``flush`` runs
them in one transaction with the positions (``project.py``). Nothing here reads a clock.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from holdem.core import contracts as c
from holdem.core.contracts import seamless as s


def columns(names: str) -> list[str]:
    return names.split()


ROUND_COLUMNS = columns(
    "operator_id player_id round_id brand status currency mode table_id table_version pay_table"
    " decision_timeout_s timeout_policy session_id command_id ante aa_bonus call_hold"
    " requested_ante requested_aa_bonus adjusted bet_at dealt_at decided_at ended_at player_cards"
    " flop turn river dealer_cards commitment deck salt decision auto settled_event_id result"
    " dealer_qualifies player_category dealer_category bonus_category call_amount total_bet"
    " total_return void_reason"
)
MOVEMENT_COLUMNS = columns(
    "operator_id player_id tx_id kind event_id round_id brand currency mode amount"
    " available held occurred_at source campaign_id"
)
BET_COLUMNS = columns("operator_id player_id round_id bet_type stake returned refunded")
SESSION_COLUMNS = columns(
    "operator_id player_id session_id table_id brand mode idle_timeout_s first_round_id"
    " started_at ended_at end_reason"
)
SETTLEMENT = columns(
    "status decision settled_event_id result dealer_qualifies player_category dealer_category"
    " bonus_category call_amount total_bet total_return ended_at"
)
KINDS: dict[type[Any], str] = {
    c.StakeTaken: "stake",
    c.CallHeld: "call_held",
    c.CallCaptured: "call_captured",
    c.CallReleased: "call_released",
    c.PayoutCredited: "payout",
    c.StakesRefunded: "refund",
    c.FundsDeposited: "deposit",
    c.FundsWithdrawn: "withdrawal",
    s.SeamlessDebited: "seamless_debit",
    s.SeamlessCredited: "seamless_credit",
    s.SeamlessRolledBack: "seamless_rollback",
    # Promotions (ADR 029): the promotion account's payments
    c.PromoCredited: "promo_credit",
    c.FreeStakeTaken: "free_stake",
    c.FreeStakeRefunded: "free_stake_refund",
}
FUN_KINDS = {"deposit": "fun_grant", "withdrawal": "fun_reset"}
SEAMLESS_KINDS = {
    "seamless.debit_requested": "debit",
    "seamless.credit_requested": "credit",
    "seamless.rollback_requested": "rollback",
}
RoundKey = tuple[str, str, str]  # (operator, player, round)


@dataclass(frozen=True)
class Where:
    """One record's place in the log and the headers that name its tenant and brand."""

    topic: str
    partition: int
    offset: int
    operator: str
    brand: str | None

    @property
    def source(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}"


@dataclass
class Batch:
    """The writes of one poll batch, merged per row; ``rows`` counts the rows they touch."""

    new_rounds: dict[RoundKey, dict[str, Any]] = field(default_factory=dict)
    round_updates: dict[RoundKey, dict[str, Any]] = field(default_factory=dict)
    bets: dict[tuple[str, str, str, str], tuple[Any, ...]] = field(default_factory=dict)
    dropped_bets: set[RoundKey] = field(default_factory=set)
    movements: list[tuple[Any, ...]] = field(default_factory=list)
    new_sessions: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    session_ends: dict[tuple[str, str, str], tuple[Any, str]] = field(default_factory=dict)
    inserts: dict[str, list[tuple[Any, ...]]] = field(default_factory=lambda: defaultdict(list))
    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    skipped: int = 0

    @property
    def rows(self) -> int:
        return (
            len(self.new_rounds)
            + len(self.round_updates)
            + len(self.bets)
            + len(self.movements)
            + len(self.new_sessions)
            + len(self.session_ends)
            + sum(len(rows) for rows in self.inserts.values())
        )

    def add(self, role: str, where: Where, message: Any) -> None:
        """Take one record (``message`` None: unreadable, counted and passed over)."""
        self.positions[(where.topic, where.partition)] = where.offset + 1
        if message is None:
            self.skipped += 1
            return
        handler = getattr(self, "_on_" + message.type.replace(".", "_"), None)
        if handler is None:
            return  # refusals of commands that moved nothing: the rejected topic's job
        handler(where, message)

    # rounds ---------------------------------------------------------------------------------
    def _round(self, where: Where, m: Any, **values: Any) -> None:
        key = (where.operator, m.player_id, m.round_id)
        target = self.new_rounds.get(key)
        if target is None:
            target = self.round_updates.setdefault(key, {})
        target.update(values)

    def _on_round_bet_placed(self, where: Where, m: c.BetPlaced) -> None:
        row = dict.fromkeys(ROUND_COLUMNS)
        row.update(
            operator_id=where.operator, player_id=m.player_id, round_id=m.round_id,
            brand=where.brand, status="placed", currency=m.currency, mode=str(m.mode),
            table_id=m.table_id, table_version=m.table_version, pay_table=m.pay_table,
            decision_timeout_s=m.decision_timeout_s,
            timeout_policy=None if m.timeout_policy is None else str(m.timeout_policy),
            command_id=m.command_id, ante=m.ante, aa_bonus=m.aa_bonus, call_hold=m.call_hold,
            requested_ante=m.requested_ante, requested_aa_bonus=m.requested_aa_bonus,
            adjusted=m.adjusted, bet_at=m.occurred_at,
        )  # fmt: skip
        self.new_rounds[(where.operator, m.player_id, m.round_id)] = row

    def _on_round_dealt(self, where: Where, m: c.Dealt) -> None:
        self._round(
            where, m, status="dealt", dealt_at=m.occurred_at, player_cards=list(m.player_cards),
            flop=list(m.flop), commitment=m.commitment, session_id=m.session_id,
        )  # fmt: skip

    def _revealed(self, where: Where, m: c.Called | c.Folded, decision: str) -> None:
        self._round(
            where, m, status="decided", decided_at=m.occurred_at, decision=decision, auto=m.auto,
            turn=m.turn, river=m.river, dealer_cards=list(m.dealer_cards), deck=list(m.deck),
            salt=m.salt,
        )  # fmt: skip

    def _on_round_called(self, where: Where, m: c.Called) -> None:
        self._revealed(where, m, "call")

    def _on_round_folded(self, where: Where, m: c.Folded) -> None:
        self._revealed(where, m, "fold")

    def _on_round_settled(self, where: Where, m: c.Settled) -> None:
        total_bet = m.ante + m.aa_bonus + m.call
        self._round(
            where, m, status="settled", decision=m.decision, settled_event_id=m.event_id,
            result=m.result, dealer_qualifies=m.dealer_qualifies,
            player_category=m.player_category, dealer_category=m.dealer_category,
            bonus_category=m.bonus_category, call_amount=m.call, total_bet=total_bet,
            total_return=m.total_return, ended_at=m.occurred_at,
        )  # fmt: skip
        for bet_type, stake, returned in (
            ("ante", m.ante, m.ante_return),
            ("call", m.call, m.call_return),
            ("aa_bonus", m.aa_bonus, m.bonus_return),
        ):
            key = (where.operator, m.player_id, m.round_id, bet_type)
            row = (*key, stake, returned, False)
            self.bets[key] = row

    def _on_round_malfunction(self, where: Where, m: c.Malfunction) -> None:
        refuses = m.refuses_settled()
        self.inserts["malfunctions"].append(
            (where.operator, m.event_id, m.player_id, m.round_id, m.source, m.reason, refuses,
             m.occurred_at)
        )  # fmt: skip
        if refuses:  # the wallet refused to pay that Settled (ADR 008): it ended nothing
            key = (where.operator, m.player_id, m.round_id)
            undone: dict[str, Any] = dict.fromkeys(SETTLEMENT)
            self._round(where, m, **{**undone, "status": "decided"})
            self.dropped_bets.add(key)
            for bet in [k for k in self.bets if k[:3] == key]:
                del self.bets[bet]

    def _on_round_voided(self, where: Where, m: c.RoundVoided) -> None:
        self._round(
            where, m, status="voided", result="voided", void_reason=m.reason,
            ended_at=m.occurred_at, total_return=None,
        )  # fmt: skip
        self.inserts["voids"].append(
            (where.operator, m.player_id, m.round_id, m.malfunction_id, m.reason, m.occurred_at)
        )

    def _on_round_bet_rejected(self, where: Where, m: c.BetRejected) -> None:
        self.inserts["bet_rejections"].append(
            (where.operator, m.event_id, m.player_id, m.round_id, where.brand, str(m.reason),
             m.detail, m.occurred_at)
        )  # fmt: skip

    # sessions -------------------------------------------------------------------------------
    def _on_round_session_started(self, where: Where, m: c.SessionStarted) -> None:
        key = (where.operator, m.player_id, m.session_id)
        self.new_sessions[key] = dict(
            zip(SESSION_COLUMNS, (*key[:2], m.session_id, m.table_id, where.brand, str(m.mode),
                m.idle_timeout_s, m.round_id, m.occurred_at, None, None), strict=True)
        )  # fmt: skip

    def _on_round_session_ended(self, where: Where, m: c.SessionEnded) -> None:
        key = (where.operator, m.player_id, m.session_id)
        if key in self.new_sessions:
            self.new_sessions[key].update(ended_at=m.occurred_at, end_reason=str(m.reason))
        else:
            self.session_ends[key] = (m.occurred_at, str(m.reason))

    # money ----------------------------------------------------------------------------------
    def _movement(self, where: Where, m: Any) -> None:
        kind = KINDS[type(m)]
        if str(m.mode) == "fun":
            kind = FUN_KINDS.get(kind, kind)
        self.movements.append(
            (where.operator, m.player_id, m.idempotency_key, kind, m.event_id, m.round_id,
             where.brand, m.currency, str(m.mode), m.amount, m.available, m.held,
             m.occurred_at, where.source, getattr(m, "campaign_id", None))
        )  # fmt: skip

    _on_wallet_stake_taken = _movement
    _on_wallet_call_held = _movement
    _on_wallet_call_captured = _movement
    _on_wallet_call_released = _movement
    _on_wallet_payout_credited = _movement
    _on_wallet_stakes_refunded = _movement
    _on_wallet_deposited = _movement
    _on_wallet_withdrawn = _movement
    _on_wallet_seamless_debited = _movement
    _on_wallet_seamless_credited = _movement
    _on_wallet_seamless_rolled_back = _movement
    _on_wallet_promo_credited = _movement
    _on_wallet_free_stake_taken = _movement
    _on_wallet_free_stake_refunded = _movement

    # seamless -------------------------------------------------------------------------------
    def _seamless_request(self, where: Where, m: Any) -> None:
        self.inserts["seamless"].append(
            (where.operator, m.player_id, m.tx_id, SEAMLESS_KINDS[m.type], m.round_id, m.currency,
             m.amount, m.occurred_at)
        )  # fmt: skip

    _on_seamless_debit_requested = _seamless_request
    _on_seamless_credit_requested = _seamless_request
    _on_seamless_rollback_requested = _seamless_request

    def _seamless_answer(self, where: Where, m: Any) -> None:
        reason = str(getattr(m, "reason", "")) or None
        answer = m.type.removeprefix("seamless.")
        self.inserts["seamless_replies"].append(
            (where.operator, m.event_id, m.player_id, m.tx_id, answer, reason, m.occurred_at)
        )

    _on_seamless_debited = _seamless_answer
    _on_seamless_debit_rejected = _seamless_answer
    _on_seamless_credited = _seamless_answer
    _on_seamless_rolled_back = _seamless_answer

    def _on_seamless_reply_refused(self, where: Where, m: s.ReplyRefused) -> None:
        self.inserts["seamless_replies"].append(
            (where.operator, m.event_id, m.player_id, m.tx_id, "reply_refused", str(m.reason),
             m.occurred_at)
        )  # fmt: skip

    # promotions and protection (issue 29): the player's state changes, shown on his page ---
    def _player_event(self, where: Where, m: Any) -> None:
        skip = {"type", "version", "event_id", "player_id", "occurred_at", "campaign_id",
                "fingerprint", "command_id"}  # fmt: skip
        detail = m.model_dump_json(exclude=skip)
        self.inserts["player_events"].append(
            (where.operator, m.event_id, m.player_id, m.type, getattr(m, "campaign_id", None),
             detail, m.occurred_at)
        )  # fmt: skip

    _on_wallet_free_hands_granted = _player_event
    _on_wallet_free_hands_cancelled = _player_event
    _on_wallet_free_hands_expired = _player_event
    _on_wallet_limits_set = _player_event
    _on_wallet_reality_check_acknowledged = _player_event
    _on_round_player_blocked = _player_event
    _on_round_player_unblocked = _player_event

    # tables ---------------------------------------------------------------------------------
    def _table(self, where: Where, m: Any) -> None:
        self.inserts["table_versions"].append(
            (m.terms.operator_id, m.table_id, m.table_version, m.type.removeprefix("table."),
             m.terms.model_dump_json(), m.occurred_at)
        )  # fmt: skip

    _on_table_opened = _table
    _on_table_changed = _table
    _on_table_closed = _table
