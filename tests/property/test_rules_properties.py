"""Settlement invariants over random rounds: money adds up, folds pay 0, suits don't matter."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from holdem.core.cards import Card
from holdem.core.forced_rounds import settle_line
from holdem.core.rules import ANTE_PAYS, RoundOutcome, settle


@dataclass(frozen=True)
class Round:
    player: tuple[int, ...]
    dealer: tuple[int, ...]
    board: tuple[int, ...]
    ante: int
    aa_bonus: int
    decision: str

    def settle(self) -> RoundOutcome:
        return settle(self.player, self.dealer, self.board, self.ante, self.aa_bonus, self.decision)  # type: ignore[arg-type]


@st.composite
def rounds(draw: st.DrawFn) -> Round:
    cards = draw(st.permutations(range(52)))[:9]
    return Round(
        player=tuple(cards[:2]),
        dealer=tuple(cards[2:4]),
        board=tuple(cards[4:9]),
        ante=draw(st.integers(1, 10**9)),
        aa_bonus=draw(st.one_of(st.just(0), st.integers(0, 10**9))),
        decision=draw(st.sampled_from(["call", "fold"])),
    )


@given(rounds())
def test_total_return_is_the_sum_of_the_parts_and_nothing_is_negative(r: Round) -> None:
    o = r.settle()
    assert o.total_return == o.ante_return + o.call_return + o.bonus_return
    assert min(o.ante_return, o.call_return, o.bonus_return) >= 0


@given(rounds())
def test_a_fold_returns_nothing(r: Round) -> None:
    o = r.settle()
    assert (o.result == "fold") == (r.decision == "fold")
    if r.decision == "fold":
        assert o.total_return == 0


@given(rounds().filter(lambda r: r.decision == "call"))
def test_a_calls_ante_and_call_return_is_lost_pushed_or_paid(r: Round) -> None:
    o = r.settle()
    a, m = r.ante, ANTE_PAYS[o.player_category]
    main = o.ante_return + o.call_return
    expected = {
        "lose": 0,
        "push": 3 * a,
        "win": (1 + m) * a + (4 * a if o.dealer_qualifies else 2 * a),
    }
    assert main in {0, 3 * a, (1 + m) * a + 2 * a, (1 + m) * a + 4 * a}
    assert main == expected[o.result]


@given(rounds())
def test_the_aa_bonus_returns_0_8_or_26_times_the_stake_and_only_on_a_call(r: Round) -> None:
    o = r.settle()
    assert o.bonus_return in {0, 8 * r.aa_bonus, 26 * r.aa_bonus}
    if o.bonus_return:
        assert r.decision == "call" and o.bonus_class != "none"


@given(rounds(), st.permutations(range(4)))
def test_renaming_suits_consistently_changes_nothing(r: Round, suits: list[int]) -> None:
    def rename(cards: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(card - card % 4 + suits[card % 4] for card in cards)

    renamed = Round(
        rename(r.player), rename(r.dealer), rename(r.board), r.ante, r.aa_bonus, r.decision
    )
    assert renamed.settle() == r.settle()


@given(
    rounds(),
    st.dictionaries(
        st.sampled_from(["id", "table", "note"]), st.integers() | st.text('ab é€"\\\n', max_size=8)
    ),
)
def test_the_harness_settles_a_json_line_exactly_as_settle_does(
    r: Round, extra: dict[str, object]
) -> None:
    def text(cards: tuple[int, ...]) -> list[str]:
        return [str(Card(card)) for card in cards]

    round_in = {
        **extra,
        "player": text(r.player),
        "dealer": text(r.dealer),
        "board": text(r.board),
        "ante": r.ante,
        "aa_bonus": r.aa_bonus,
        "decision": r.decision,
    }
    out, ok = settle_line(json.dumps(round_in), 1)
    assert ok
    assert out == {**round_in, "outcome": r.settle().to_wire()}
    assert json.loads(json.dumps(out)) == out
