"""Round summaries in every language of the rule sheets, from the catalogue's terms only."""

from __future__ import annotations

import doctest

import pytest
from support.queries import play
from support.rounds import RoundEvents

from holdem.core import summary as summary_module
from holdem.core.contracts import RoundView
from holdem.core.summary import SummaryError, render
from holdem.core.terms import LANGUAGES, TermError, term
from holdem.query.state import evolve, initial_state


def view_of(decision: str, **game: object) -> RoundView:
    played = play(RoundEvents(**game), 1_000, decision)  # type: ignore[arg-type]
    state = initial_state()
    for event in [*played.rounds, *played.wallet]:
        state = evolve(state, event)
    return state.books["p1"].rounds["r1"]


def test_doctests_pass() -> None:
    assert doctest.testmod(summary_module).failed == 0


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_called_round_names_hands_and_bets_in_the_language(lang: str) -> None:
    text = render(view_of("call"), lang)
    for key in ("role.player", "role.dealer", "hand.three_of_a_kind", "hand.high_card",
                "bet.ante", "bet.call", "bet.aa_bonus"):  # fmt: skip
        assert term(key, lang) in text, key
    assert "As Ad | Ah Ks 9d 4c 3h" in text and "7c 2d" in text
    assert text.endswith("= +0.45")  # 35 staked, 80 back
    assert len(text.splitlines()) == 4


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_fold_says_fold_from_the_sheets_controls(lang: str) -> None:
    text = render(view_of("fold"), lang)
    assert term("control.fold", lang) in text
    assert term("bet.call", lang) not in text  # no call was made
    assert text.endswith("= -0.15")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_void_shows_the_refund_and_reason_and_no_hidden_card(lang: str) -> None:
    text = render(view_of("void"), lang)
    assert "⊘ stuck" in text and text.endswith("= ±0.00")
    assert term("role.dealer", lang) not in text and "4c" not in text


def test_a_push_is_named() -> None:
    pushed = view_of("call").model_copy(update={"result": "push"})
    assert term("result.push", "nb") in render(pushed, "nb")


def test_languages_differ_and_english_is_the_default() -> None:
    view = view_of("call")
    texts = {render(view, lang) for lang in LANGUAGES}
    assert len(texts) == len(LANGUAGES)
    assert render(view) == render(view, "en")


def test_an_open_round_or_unknown_language_has_no_summary() -> None:
    with pytest.raises(SummaryError):
        render(view_of("call").model_copy(update={"state": "dealt"}), "en")
    with pytest.raises(SummaryError):
        render(view_of("call"), "de")


def test_the_table_is_shown_when_the_round_carries_it() -> None:
    view = view_of("call").model_copy(update={"table_id": "t-7", "table_version": 3})
    assert render(view).splitlines()[0].startswith("r1 t-7/v3 ")


def test_the_control_terms_are_apart_from_the_sheets_tables() -> None:
    assert term("control.fold", "ms") == "Lipat"
    with pytest.raises(TermError):
        term("control.win", "en")  # no sheet names it: no invented word
