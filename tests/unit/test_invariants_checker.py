"""The invariants checker itself: silent on a sound hand-made run, loud on each kind of breach."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from support.dealer import sealed, unseal
from support.invariants import Record, violations
from support.rounds import RoundEvents, deck_for

from holdem.core.contracts import (
    CallCaptured,
    CallHeld,
    CallReleased,
    FundsDeposited,
    FundsWithdrawn,
    Message,
    PayoutCredited,
    PlayerBlocked,
    PlayerUnblocked,
    RoundClosed,
    RoundVoided,
    Settled,
    StakesRefunded,
    StakeTaken,
    dump,
)

WIN = RoundEvents(round_id="r1")  # As Ad vs 7c 2d on Ah Ks 9d 4c 3h: 80 back on 10 + 5 + 20
FOLD = RoundEvents(round_id="r2", deck=deck_for("2c7d", "AsAh", "KdQc9s4h3d"))
VOID = RoundEvents(round_id="r3", deck=deck_for("KcKd", "2h2s", "3c8d9hTsJc"))
# (available, held) change per unit of amount: the test's own copy of the money rules
MOVES: dict[type[Any], tuple[int, int]] = {
    FundsDeposited: (1, 0),
    FundsWithdrawn: (-1, 0),
    StakeTaken: (-1, 0),
    CallHeld: (-1, 1),
    CallCaptured: (0, -1),
    CallReleased: (1, -1),
    PayoutCredited: (1, 0),
    StakesRefunded: (1, 0),
}


@dataclass
class Run:
    """Builds a run's records by hand: offsets per topic, one clock, the player's balances."""

    records: list[Record] = field(default_factory=list)
    available: int = 0
    held: int = 0

    def add(self, role: str, message: Message, raw: bytes | None = None) -> None:
        offset = sum(1 for r in self.records if r.role == role)
        raw = dump(message) if raw is None else raw
        self.records.append(Record(role, 0, offset, raw, len(self.records), message))

    def move(self, model: type[Any], key: str, amount: int, round_id: str | None = None) -> None:
        d_available, d_held = MOVES[model]
        self.available += d_available * amount
        self.held += d_held * amount
        extra = {"ante": 10, "aa_bonus": 5} if model is StakeTaken else {}
        event = model(
            **WIN.envelope(key, len(self.records)),
            idempotency_key=key,
            currency="EUR",
            amount=amount,
            available=self.available,
            held=self.held,
            **extra,
        )
        self.add("wallet", event.model_copy(update={"round_id": round_id}))

    def close(self, game: RoundEvents, staked: int, returned: int, voided: bool = False) -> None:
        """The wallet's round.closed after the round's last movement (ADR 028)."""
        outcome = "voided" if voided else "settled"
        fields = {"currency": "EUR", "staked": staked, "returned": returned, "outcome": outcome}
        fields["net"] = returned - staked
        self.add("rounds", RoundClosed(**game.envelope("closed", 7), **fields))

    def bet(self, game: RoundEvents) -> None:
        self.add("vault", sealed(game))
        self.add("rounds", game.bet_placed())
        self.move(StakeTaken, f"stake:{game.round_id}", 15, game.round_id)
        self.move(CallHeld, f"hold:{game.round_id}", 20, game.round_id)
        self.add("rounds", game.dealt())


def settled(game: RoundEvents, **outcome: Any) -> Settled:
    fields = {"currency": "EUR", "ante": 10, "aa_bonus": 5, "dealer_qualifies": True}
    return Settled(**game.envelope("settled", 5), **{**fields, **outcome})


WIN_OUTCOME = {
    "decision": "call",
    "result": "win",
    "dealer_qualifies": False,
    "call": 20,
    "ante_return": 20,
    "call_return": 20,
    "bonus_return": 40,
    "total_return": 80,
    "player_category": "three_of_a_kind",
    "dealer_category": "high_card",
    "bonus_category": "three_of_a_kind",
    "bonus_class": "aces_to_straight",
}
FOLD_OUTCOME = {
    **dict.fromkeys(("call", "ante_return", "call_return", "bonus_return", "total_return"), 0),
    "decision": "fold",
    "result": "fold",
    "player_category": "high_card",
    "dealer_category": "pair",
    "bonus_category": "high_card",
    "bonus_class": "none",
}


def voided(game: RoundEvents, name: str = "voided") -> RoundVoided:
    return RoundVoided(**game.envelope(name, 6), malfunction_id="m1", reason="malfunction: test")


def sound_run() -> Run:
    """A deposit, a won call, a fold, a round voided before its decision, a withdrawal."""
    run = Run()
    run.move(FundsDeposited, "deposit:c1", 1000)
    run.bet(WIN)
    run.add("rounds", WIN.called())
    run.move(CallCaptured, "capture:r1", 20, "r1")
    run.add("rounds", settled(WIN, **WIN_OUTCOME))
    run.move(PayoutCredited, "payout:r1", 80, "r1")
    run.close(WIN, 35, 80)
    run.bet(FOLD)
    run.add("rounds", FOLD.folded())
    run.move(CallReleased, "release:r2", 20, "r2")
    run.add("rounds", settled(FOLD, **FOLD_OUTCOME))
    run.move(PayoutCredited, "payout:r2", 0, "r2")  # a lost round is closed by a payout of 0
    run.close(FOLD, 15, 0)
    run.bet(VOID)
    run.add("rounds", VOID.malfunction())
    run.add("rounds", voided(VOID))
    run.move(CallReleased, "release:r3", 20, "r3")
    run.move(StakesRefunded, "refund:r3", 15, "r3")
    run.close(VOID, 15, 15, voided=True)
    run.move(FundsWithdrawn, "withdraw:c2", 100)
    return run


def without(run: Run, event_type: str, round_id: str) -> list[Record]:
    """The run's records minus the first ``event_type`` of ``round_id``."""
    drop = next(
        r for r in run.records if (r.message.type, r.message.round_id) == (event_type, round_id)
    )
    return [r for r in run.records if r is not drop]


def one_of(found: list[str], *words: str) -> str:
    """The violation that mentions every word; fails the test if there is none."""
    hits = [v for v in found if all(w in v for w in words)]
    assert hits, f"no violation mentions {words}: {found}"
    return hits[0]


def test_a_sound_run_has_no_violations() -> None:
    run = sound_run()

    assert violations(run.records, {("p1", "EUR", "real"): (930, 0)}) == []


def test_unreadable_records_are_left_to_the_services_rejections() -> None:
    run = sound_run()
    run.records.append(Record("commands", 0, 0, b"{not json", 99))

    assert violations(run.records) == []


def test_a_round_settled_twice_is_reported() -> None:
    run = sound_run()
    run.add("rounds", settled(WIN, **WIN_OUTCOME).model_copy(update={"event_id": "again"}))

    one_of(violations(run.records), "p1/r1", "ended 2 times")


def test_a_forged_settled_the_wallet_refused_ended_nothing() -> None:
    run = sound_run()
    forged = settled(WIN, **{**WIN_OUTCOME, "total_return": 999_999_999})
    forged = forged.model_copy(update={"event_id": "forged"})
    run.add("rounds", forged)
    refusal = WIN.malfunction("w1", source="wallet", reason="settlement_mismatch: differs")
    run.add("rounds", refusal.model_copy(update={"causation_id": "forged"}))

    assert violations(run.records) == []
    unrefused = [
        r
        for r in run.records
        if r.message is None
        or r.message.type != "round.malfunction"
        or r.message.source != "wallet"
    ]
    one_of(violations(unrefused), "p1/r1", "ended 2 times")


def test_a_round_both_settled_and_voided_is_reported() -> None:
    run = sound_run()
    run.add("rounds", voided(WIN))

    one_of(violations(run.records), "p1/r1", "round.settled, round.voided")


def test_a_bet_that_never_ended_is_reported_unless_open_rounds_are_allowed() -> None:
    run = sound_run()
    run.bet(RoundEvents(round_id="r4"))

    one_of(violations(run.records), "p1/r4", "never ended")
    assert violations(run.records, require_ended=False) == []


def test_a_settled_whose_returns_are_not_the_rules_is_reported() -> None:
    run = Run()
    run.move(FundsDeposited, "deposit:c1", 1000)
    run.bet(WIN)
    run.add("rounds", WIN.called())
    run.move(CallCaptured, "capture:r1", 20, "r1")
    run.add("rounds", settled(WIN, **{**WIN_OUTCOME, "total_return": 90, "bonus_return": 50}))
    run.move(PayoutCredited, "payout:r1", 90, "r1")
    run.close(WIN, 35, 90)

    found = violations(run.records)
    assert one_of(found, "p1/r1", "differs from the rules") and len(found) == 1


def test_a_reported_balance_the_amounts_do_not_give_is_reported() -> None:
    run = sound_run()
    last = run.records[-1]
    run.records[-1] = replace(last, message=last.message.model_copy(update={"available": 931}))

    found = violations(run.records)
    one_of(found, "reports (931, 0), the amounts give (930, 0)")
    one_of(found, "money not conserved", "EUR")


def test_a_wallet_state_that_differs_from_the_events_is_reported() -> None:
    found = violations(sound_run().records, {("p1", "EUR", "real"): (900, 30)})

    one_of(found, "wallet state (900, 30) but the events give (930, 0)")


def test_an_idempotency_key_applied_twice_is_reported() -> None:
    run = sound_run()
    run.move(PayoutCredited, "payout:r1", 80, "r1")

    found = violations(run.records)
    one_of(found, "payout:r1 applied 2 times")
    one_of(found, "p1/r1", "paid [80, 80]")


def test_a_voided_round_without_its_refund_is_reported() -> None:
    found = violations(without(sound_run(), "wallet.stakes_refunded", "r3"))

    one_of(found, "p1/r3", "voided with 15 taken but refunded []")


def test_a_call_hold_captured_on_a_fold_is_reported() -> None:
    run = sound_run()
    run.records = without(run, "wallet.call_released", "r2")
    run.move(CallCaptured, "capture:r2", 20, "r2")

    one_of(violations(run.records), "p1/r2", "captured [20] released []")


def test_money_moved_for_a_round_without_a_bet_is_reported() -> None:
    run = sound_run()
    run.move(StakeTaken, "stake:ghost", 15, "ghost")

    one_of(violations(run.records), "p1/ghost", "without a BetPlaced")


def test_a_dealer_card_in_a_record_before_the_decision_is_a_leak() -> None:
    run = Run()
    run.add("vault", sealed(WIN))
    leaky = json.loads(dump(WIN.dealt()))
    run.add("rounds", WIN.dealt(), raw=json.dumps({**leaky, "peek": ["7c", "2d"]}).encode())
    run.add("rounds", WIN.called())

    one_of(violations(run.records, require_ended=False), "['2d', '7c'] visible at rounds[0]@0")


def test_a_turn_inside_a_rejected_records_raw_text_before_the_decision_is_a_leak() -> None:
    run = Run()
    run.add("vault", sealed(WIN))
    inner = json.dumps({"player_id": "p1", "round_id": "r1", "turn": "4c"})
    rejected = {"type": "rejected.message", "player_id": "p1", "raw": inner}
    run.add("rejected", WIN.dealt(), raw=json.dumps(rejected).encode())
    run.add("rounds", WIN.called())

    one_of(violations(run.records, require_ended=False), "['4c'] visible at rejected")


def test_the_deck_of_a_round_never_decided_must_never_be_seen() -> None:
    run = sound_run()
    index = next(i for i, r in enumerate(run.records) if r.message.type == "round.voided")
    record = run.records[index]
    raw = json.dumps({**json.loads(record.raw), "deck": list(map(str, VOID.deck))}).encode()
    run.records[index] = replace(record, raw=raw)

    one_of(violations(run.records, unseal=unseal), "p1/r3", "visible at rounds")


@pytest.mark.parametrize(
    ("tamper", "words"),
    [
        ({"salt": "ab" * 32}, "does not verify against the Dealt commitment"),
        ({"turn": "3h", "river": "4c"}, "not the deck's deal order"),
    ],
)
def test_a_revealed_deck_that_does_not_verify_is_reported(
    tamper: dict[str, Any], words: str
) -> None:
    run = Run()
    run.add("rounds", WIN.bet_placed())
    run.add("rounds", WIN.dealt())
    run.add("rounds", WIN.called(**tamper))

    one_of(violations(run.records, require_ended=False), "p1/r1", words)


def test_a_round_paid_but_never_closed_is_reported() -> None:
    found = violations(without(sound_run(), "round.closed", "r2"))

    assert one_of(found, "p1/r2", "not followed by a round.closed") and len(found) == 1


def test_a_round_closed_twice_is_reported() -> None:
    run = sound_run()
    run.close(WIN, 35, 80)

    one_of(violations(run.records), "p1/r1", "closed 2 times")


def test_a_round_closed_before_its_payout_is_reported() -> None:
    run = sound_run()
    closed = next(r for r in run.records if r.message.type == "round.closed")
    run.records = [replace(closed, timestamp=0) if r is closed else r for r in run.records]

    one_of(violations(run.records), "p1/r1", "after its round.closed")


def test_a_round_closed_with_amounts_the_ledger_did_not_move_is_reported() -> None:
    run = sound_run()
    run.records = without(run, "round.closed", "r1")
    run.close(WIN, 15, 80)  # the captured call is left out of what the round took

    one_of(violations(run.records), "p1/r1", "staked 15", "the ledger says 35, 80")


def test_a_bet_placed_while_the_player_is_blocked_is_reported() -> None:
    run = Run()
    run.move(FundsDeposited, "deposit:c1", 1000)
    block = {"player_id": "p1", "occurred_at": WIN.at, "command_id": "b1"}
    run.add("rounds", PlayerBlocked(event_id="blocked", **block))
    run.bet(WIN)

    found = violations(run.records, require_ended=False)
    assert one_of(found, "p1/r1", "while the player was blocked") and len(found) == 1
    run.records.insert(-4, Record("rounds", 0, 1, b"", 0, PlayerUnblocked(event_id="u", **block)))
    for i, r in enumerate(x for x in run.records if x.role == "rounds"):
        run.records[run.records.index(r)] = replace(r, offset=i)
    assert violations(run.records, require_ended=False) == []
