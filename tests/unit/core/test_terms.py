"""Terminology catalogues: complete in every language and true to the rule sheets."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from holdem.core import terms as terms_module
from holdem.core.cards import HandCategory
from holdem.core.terms import CATALOGUES, KEYS, LANGUAGES, TermError, hand_term, term

# The closing table of each rule sheet (English term -> translation), checked in as test data so
# no test reads files outside the repository: tests/data/README.md says where it comes from.
SHEET_TERMS = Path(__file__).resolve().parents[2] / "data" / "rule_sheet_terms.json"


def sheet_table(lang: str) -> dict[str, str]:
    """The sheet's table of English terms and their translations in ``lang``."""
    sheets = json.loads(SHEET_TERMS.read_text(encoding="utf-8"))
    terms: dict[str, str] = sheets[lang]["terms"]
    return terms


def test_doctests_pass() -> None:
    assert doctest.testmod(terms_module).failed == 0


def test_the_five_languages_of_the_sheets_are_catalogued() -> None:
    assert set(LANGUAGES) == {"en", "bg", "ro", "ms", "nb"}


@pytest.mark.parametrize("lang", ["en", "bg", "ro", "ms", "nb"])
def test_every_key_exists_in_every_language_and_no_text_is_empty(lang: str) -> None:
    assert tuple(CATALOGUES[lang]) == KEYS
    assert all(text.strip() == text and text for text in CATALOGUES[lang].values())


def test_the_catalogue_has_every_term_of_the_sheets_tables() -> None:
    assert len(KEYS) == 27
    assert {f"hand.{hand.key}" for hand in HandCategory} <= set(KEYS)


def test_bonus_rows_are_keyed_by_the_settlement_bonus_class() -> None:
    assert term("bonus.flush_or_better") == "Flush or higher"
    assert term("bonus.aces_to_straight") == "Pair of Aces to Straight"


def test_hand_names_follow_the_hand_categories() -> None:
    assert hand_term(HandCategory.ROYAL_FLUSH, "ms") == "Siram diraja"
    assert hand_term(HandCategory.TWO_PAIR, "nb") == "2 par"
    assert hand_term(HandCategory.HIGH_CARD, "ro") == "Carte puternică"


def test_unknown_keys_and_languages_are_errors() -> None:
    with pytest.raises(TermError):
        term("hand.five_of_a_kind", "en")
    with pytest.raises(TermError):
        term("bet.ante", "de")


@pytest.mark.parametrize("lang", ["bg", "ro", "ms", "nb"])
def test_translations_are_exactly_the_sheets(lang: str) -> None:
    table = sheet_table(lang)
    english = CATALOGUES["en"]
    assert {english[key]: CATALOGUES[lang][key] for key in KEYS} == table
