"""Issue 29 defect 15: every label of every back-office page goes through the catalogue, in
all five languages. The templates are scanned for words outside ``t()`` (literal text and
displayed string literals), every key they ask for must exist in every language, and the
Bulgarian pages must not show the English labels the issue found."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from support.bo_web import fill, running_web

from holdem.backoffice import db
from holdem.backoffice.auth import add_user
from holdem.backoffice.i18n import LANGUAGES, has_label

pytestmark = pytest.mark.postgres

TEMPLATES = Path(db.__file__).parent / "templates"
# Words that are the same in every language: formats, units and the game's name.
UNTRANSLATED = {"JSON", "CSV", "UTC", "Casino", "Hold'em", "v"}
KEY_CALL = re.compile(r"""\bt\(\s*(["'])([^"']+)\1\s*\)""")
PREFIXED_CALL = re.compile(r"""\bt\(\s*(["'])([a-z_]+\.)\1\s*~""")
NOT_DISPLAYED = re.compile(
    r"""\b(?:t|strftime|money|quote)\(\s*(["'])[^"']*\1|\b(?:==|!=|in)\s*(["'])[^"']*\2"""
    r"""|\[\s*(["'])[^"']*\3\s*\]"""
)


def templates() -> list[Path]:
    found = sorted(TEMPLATES.glob("*.html"))
    assert found, TEMPLATES
    return found


def literal_words(source: str) -> list[str]:
    """Words a page shows that no ``t()`` gave: text between tags, and string literals inside
    ``{{ }}`` that are not a key, a format or a comparison."""
    expressions = re.findall(r"\{\{(.*?)\}\}", source, flags=re.S)
    text = re.sub(r"\{#.*?#\}|\{%.*?%\}|\{\{.*?\}\}", " ", source, flags=re.S)
    text = re.sub(r"<style.*?</style>|<[^>]+>|&[a-z]+;", " ", text, flags=re.S)
    words = re.findall(r"[^\W\d_][\w'’-]*", text)
    for expression in expressions:
        shown = NOT_DISPLAYED.sub(" ", expression)
        for literal in re.findall(r"""(["'])(.*?)\1""", shown):
            words += re.findall(r"[^\W\d_][\w'’-]*", literal[1])
    return [word for word in words if word not in UNTRANSLATED]


@pytest.mark.parametrize("template", templates(), ids=lambda path: path.name)
def test_no_template_shows_a_word_outside_the_catalogue(template: Path) -> None:
    source = template.read_text()
    words = literal_words(source.replace('"standard-1"', ""))  # a pay table's id: data
    assert not words, f"{template.name}: untranslated {sorted(set(words))}"


def test_the_scan_finds_what_the_issue_found() -> None:
    before = '<th>Currency</th><td>{{ "qualifies" if q else "does not qualify" }}</td>'
    assert literal_words(before) == ["Currency", "qualifies", "does", "not", "qualify"]
    assert literal_words('<th>{{ t("currency") }}</th>{% if r.status == "settled" %}') == []


def test_every_key_the_pages_ask_for_exists_in_every_language() -> None:
    keys = {key for path in templates() for _, key in KEY_CALL.findall(path.read_text())}
    keys |= {f"funded.{who}" for who in ("player", "promotion")}  # t("funded." ~ ...)
    keys |= {"login_failed"}  # the login page's error, a key from web.py
    assert len(keys) > 40
    for key in sorted(keys):
        for lang in LANGUAGES:
            assert has_label(key, lang), f"{key!r} has no {lang} text"
    prefixes = {p for path in templates() for _, p in PREFIXED_CALL.findall(path.read_text())}
    assert prefixes == {"funded.", "hand."}, prefixes


@pytest.fixture
def site(dsn: str) -> Iterator[str]:
    fill(dsn, "op-a", 20, free_every=4, voids_every=5, credits=100)
    with db.connect(dsn) as conn:
        add_user(conn, "reg", "pw", "regulator", "op-a")
    with running_web(dsn) as url:
        yield url


ISSUE_WORDS = (
    "Currency", "Refunds", "GGR", ">reason<", ">tx<", ">answer<", "(qualifies)",
    "(does not qualify)", " or ", "equals the commitment", "Board", "login failed",
)  # fmt: skip


def test_the_bulgarian_pages_show_none_of_the_english_labels(site: str) -> None:
    reg = requests.Session()
    failed = reg.post(f"{site}/login?lang=bg", data={"username": "reg", "password": "no"})
    assert "неуспешен вход" in failed.text
    reg.post(f"{site}/login", data={"username": "reg", "password": "pw"})
    rounds = reg.get(f"{site}/rounds.json?player=sp00001").json()["rounds"]
    pages = [f"/rounds/{r['player_id']}/{r['round_id']}" for r in rounds]
    pages += ["/statements?day=2026-11-30", "/flagged", "/players/sp00001", "/rounds?player=sp1"]
    for page in pages:
        text = reg.get(f"{site}{page}", params={"lang": "bg"}).text
        body = text.split("<main>", 1)[1]
        found = [word for word in ISSUE_WORDS if word in body]
        assert not found, (page, found)
