"""Issue 29 defects 8, 9 and 10: server-side sessions that logout, a password change and a
disabled user end (a copied cookie dies with them), short-lived with renewal, a Secure cookie
over TLS, no open redirect through ``next``, the query string kept through the login, and the
metrics on a port of their own."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
import requests
from support.bo_web import fill, running_web
from support.postgres import free_port

from holdem.backoffice import cli, db, web
from holdem.backoffice.auth import add_user
from holdem.backoffice.settings import BackofficeSettings

pytestmark = pytest.mark.postgres

PASSWORD = "correct horse"
PAGE = "/rounds?player=sp00001&outcome=win"


@pytest.fixture
def site(dsn: str) -> Iterator[str]:
    fill(dsn, "op-a", 10)
    with db.connect(dsn) as conn:
        add_user(conn, "sue", PASSWORD, "support", "op-a")
    with running_web(dsn) as url:
        yield url


def login(url: str, password: str = PASSWORD, **headers: str) -> requests.Session:
    session = requests.Session()
    answer = session.post(
        f"{url}/login", data={"username": "sue", "password": password}, headers=headers,
        allow_redirects=False,
    )  # fmt: skip
    assert answer.status_code == 303, answer.text
    return session


def copy_of(session: requests.Session) -> requests.Session:
    """Another client holding the same cookie, as one copied out of a browser would be."""
    thief = requests.Session()
    thief.cookies.set(web.COOKIE, session.cookies[web.COOKIE])
    return thief


def logged_in(session: requests.Session, url: str) -> bool:
    answer = session.get(f"{url}{PAGE}", allow_redirects=False)
    assert answer.status_code in (200, 303), answer.status_code
    return answer.status_code == 200


def test_a_copied_cookie_dies_at_logout(site: str) -> None:
    sue = login(site)
    thief = copy_of(sue)
    assert logged_in(sue, site) and logged_in(thief, site)
    assert sue.get(f"{site}/logout", allow_redirects=False).status_code == 303
    assert not logged_in(thief, site)
    assert not logged_in(sue, site)


def test_a_password_change_and_a_disabled_user_end_every_session(
    site: str, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    thief = copy_of(login(site))
    with db.connect(dsn) as conn:
        add_user(conn, "sue", "another password", "support", "op-a")
    assert not logged_in(thief, site)
    thief = copy_of(login(site, "another password"))
    assert logged_in(thief, site)
    monkeypatch.setenv("HOLDEM_BACKOFFICE_DSN", dsn)
    assert cli.main(["disable-user", "sue"]) == 0
    assert not logged_in(thief, site)
    refused = requests.post(
        f"{site}/login", data={"username": "sue", "password": "another password"},
        allow_redirects=False,
    )  # fmt: skip
    assert refused.status_code == 200 and "login failed" in refused.text
    assert web.COOKIE not in refused.cookies


def test_a_session_is_short_lived_and_each_request_renews_it(site: str, dsn: str) -> None:
    sue = login(site)
    with db.connect(dsn) as conn:
        conn.execute("UPDATE web_sessions SET expires_at = now() + interval '5 seconds'")
        assert logged_in(sue, site)
        renewed = conn.execute(
            "SELECT expires_at - now() > interval '60 seconds' FROM web_sessions"
        ).fetchone()
        assert renewed == (True,)
        conn.execute("UPDATE web_sessions SET expires_at = now() - interval '1 second'")
        assert not logged_in(sue, site)
    sue = login(site)
    with db.connect(dsn) as conn:  # renewal never passes the absolute end
        conn.execute("UPDATE web_sessions SET ends_at = now() - interval '1 second'")
    assert not logged_in(sue, site)


def test_the_cookie_is_secure_over_tls_and_http_only_always(site: str) -> None:
    # uvicorn takes the scheme from X-Forwarded-Proto of a trusted proxy (127.0.0.1)
    over_tls = requests.post(
        f"{site}/login", data={"username": "sue", "password": PASSWORD},
        headers={"X-Forwarded-Proto": "https"}, allow_redirects=False,
    )  # fmt: skip
    plain = requests.post(
        f"{site}/login", data={"username": "sue", "password": PASSWORD}, allow_redirects=False
    )
    assert "secure" in over_tls.headers["set-cookie"].lower()
    assert "secure" not in plain.headers["set-cookie"].lower()
    for answer in (over_tls, plain):
        assert "httponly" in answer.headers["set-cookie"].lower()


@pytest.mark.parametrize(
    "target",
    ["//evil.example/", "/\\evil.example", "/\\/evil.example", "\\\\evil.example",
     "https://evil.example/", "/\t/evil.example", "http:evil", ""],
)  # fmt: skip
def test_next_never_leaves_the_site(site: str, target: str) -> None:
    answer = requests.post(
        f"{site}/login", data={"username": "sue", "password": PASSWORD, "next": target},
        allow_redirects=False,
    )  # fmt: skip
    assert answer.status_code == 303 and answer.headers["location"] == "/"


def test_the_login_redirect_keeps_the_query_string(site: str) -> None:
    first = requests.get(f"{site}{PAGE}", allow_redirects=False)
    assert first.status_code == 303
    assert first.headers["location"] == f"/login?next={quote(PAGE, safe='')}"
    form = requests.get(f"{site}{first.headers['location']}").text
    assert f'value="{PAGE.replace("&", "&amp;")}"' in form
    answer = requests.post(
        f"{site}/login", data={"username": "sue", "password": PASSWORD, "next": PAGE},
        allow_redirects=False,
    )  # fmt: skip
    assert answer.headers["location"] == PAGE


def test_metrics_are_on_their_own_port_not_the_web_port(site: str) -> None:
    assert logged_in(login(site), site)
    assert requests.get(f"{site}/metrics", allow_redirects=False).status_code in (303, 404)
    port = free_port()
    settings = BackofficeSettings(web_metrics_host="127.0.0.1", web_metrics_port=port)
    server = web.start_metrics(settings)
    assert server is not None
    try:
        text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        server.shutdown()
        server.server_close()
    assert 'holdem_backoffice_request_seconds_count{route="rounds",status="200"}' in text
    assert web.start_metrics(BackofficeSettings(web_metrics_port=0)) is None
