"""The web back office (Starlette, server-rendered Jinja2): login, rounds, a round's replay page,
a player's history, daily statements and exports, flagged activity; JSON beside every page."""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit
from wsgiref.simple_server import WSGIServer

from jinja2 import Environment, FileSystemLoader, select_autoescape
from prometheus_client import start_http_server
from psycopg_pool import ConnectionPool
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from holdem.backoffice import db, metrics, queries, reconcile, reports
from holdem.backoffice.auth import Authenticator, PasswordAuthenticator, User
from holdem.backoffice.i18n import BET_TERMS, LANGUAGES, label
from holdem.backoffice.settings import BackofficeSettings
from holdem.core.cards import Card
from holdem.core.currencies import money as currency_money

COOKIE = "holdem_bo"
MAX_UPLOAD = 64 * 1024 * 1024  # an operator's CSV to reconcile: a day is far smaller
Handler = Callable[[Request, User], Any]
# The day's reports: a page each, a JSON beside it, CSV and JSON exports.
DAILY: dict[str, Callable[[Any, str, date], list[Any]]] = {
    "statement": reports.statement, "promotions": reports.promotions,
}  # fmt: skip


def money(amount: int | None, currency: str = "") -> str:
    """Minor units as the currency writes them (``holdem.core.currencies``), from integers.

    >>> money(123456, "EUR"), money(-5, "EUR"), money(7, "JPY"), money(7, "BHD")
    ('1234.56 EUR', '-0.05 EUR', '7 JPY', '0.007 BHD')
    """
    if amount is None:
        return ""
    return f"{currency_money(amount, currency)} {currency}".strip()


def card(text: str) -> str:
    return Card.parse(text).pretty


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()  # noqa: UP017
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(type(value).__name__)


class Backoffice:
    """The pages and what they need: settings, a connection pool, an authenticator."""

    def __init__(self, settings: BackofficeSettings, authenticator: Authenticator | None = None):
        self.settings = settings
        self.pool = ConnectionPool(settings.dsn, min_size=1, max_size=8, open=False,
                                   kwargs={"autocommit": True})  # fmt: skip
        self.authenticator = authenticator or PasswordAuthenticator()
        self.templates = Environment(
            loader=FileSystemLoader(Path(__file__).parent / "templates"),
            autoescape=select_autoescape(["html"]),
        )
        self.templates.filters.update(money=money, card=card)

    # sessions -------------------------------------------------------------------------------
    # The cookie is a random token; the server keeps its hash in ``web_sessions``, so a logout,
    # a password change or a disabled user ends it for every copy of the cookie. Each request
    # renews it by ``session_idle_s``, never past ``session_max_s`` after the login.
    def open_session(self, username: str) -> str:
        token = secrets.token_urlsafe(32)
        s = self.settings
        with self.pool.connection() as conn:
            conn.execute("DELETE FROM web_sessions WHERE ends_at < now()")  # bounded: no history
            conn.execute(
                "INSERT INTO web_sessions (token_hash, username, expires_at, ends_at)"
                " VALUES (%s, %s, now() + make_interval(secs => %s),"
                " now() + make_interval(secs => %s))",
                (_digest(token), username, min(s.session_idle_s, s.session_max_s), s.session_max_s),
            )
        return token

    def user_of(self, request: Request) -> User | None:
        token = request.cookies.get(COOKIE, "")
        if not token:
            return None
        with self.pool.connection() as conn:
            row = conn.execute(
                "UPDATE web_sessions s SET expires_at ="
                " least(now() + make_interval(secs => %s), s.ends_at)"
                " FROM users u WHERE s.token_hash = %s AND u.username = s.username"
                " AND s.expires_at > now() AND s.ends_at > now() AND NOT u.disabled"
                " RETURNING u.username, u.role, u.operator_id",
                (self.settings.session_idle_s, _digest(token)),
            ).fetchone()
        return User(row[0], row[1], row[2]) if row else None

    def close_session(self, request: Request) -> None:
        token = request.cookies.get(COOKIE, "")
        if token:
            with self.pool.connection() as conn:
                conn.execute("DELETE FROM web_sessions WHERE token_hash = %s", (_digest(token),))

    # rendering ------------------------------------------------------------------------------
    def render(self, request: Request, name: str, user: User | None, **context: Any) -> Response:
        asked = request.query_params.get("lang") or request.cookies.get("lang") or "en"
        lang = asked if asked in LANGUAGES else "en"
        if request.url.path.endswith(".json"):
            body = json.dumps(context, default=_jsonable, indent=1)
            return Response(body, media_type="application/json")
        page = self.templates.get_template(name).render(
            user=user, lang=lang, languages=LANGUAGES, t=lambda key: label(key, lang),
            bet_term=lambda bet: label(BET_TERMS.get(bet) or bet, lang), request=request,
            quote=lambda text: quote(str(text), safe=""), **context,
        )  # fmt: skip
        response = HTMLResponse(page)
        if request.query_params.get("lang") in LANGUAGES:
            response.set_cookie("lang", lang, samesite="lax", httponly=True)
        return response

    def page(
        self, route: str, area: str, handler: Handler
    ) -> Callable[[Request], Awaitable[Response]]:
        """Login required, ``area`` in the user's role, timed; the handler runs in a thread."""

        async def endpoint(request: Request) -> Response:
            started = time.perf_counter()
            user = await run_in_threadpool(self.user_of, request)
            if user is None:
                here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                response: Response = RedirectResponse(f"/login?next={quote(here, safe='')}", 303)
            elif not user.may(area):
                response = PlainTextResponse(f"forbidden: {user.role} may not open {area}", 403)
            else:
                if request.method == "POST":  # read here: the handler runs in a thread
                    request.state.form = await request.form(max_files=1, max_fields=10)
                response = await run_in_threadpool(handler, request, user)
            metrics.REQUEST_SECONDS.labels(route, str(response.status_code)).observe(
                time.perf_counter() - started
            )
            return response

        return endpoint

    # pages ----------------------------------------------------------------------------------
    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            return self.render(request, "login.html", None, error=None,
                               next=local_target(request.query_params.get("next")))  # fmt: skip
        form = await request.form()
        username, password = str(form.get("username", "")), str(form.get("password", ""))
        target = local_target(str(form.get("next") or ""))

        def check() -> User | None:
            with self.pool.connection() as conn:
                return self.authenticator.authenticate(conn, username, password)

        user = await run_in_threadpool(check)
        if user is None:
            return self.render(request, "login.html", None, error="login_failed", next=target)
        token = await run_in_threadpool(self.open_session, user.username)
        response = RedirectResponse(target, 303)
        # No max_age: the browser forgets it when closed; the server ends it sooner (above).
        response.set_cookie(COOKIE, token, httponly=True, samesite="lax",
                            secure=request.url.scheme == "https")  # fmt: skip
        return response

    async def logout(self, request: Request) -> Response:
        await run_in_threadpool(self.close_session, request)
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, httponly=True, samesite="lax")
        return response

    def home(self, request: Request, user: User) -> Response:
        target = "/rounds" if user.may("rounds") else "/statements"
        return RedirectResponse(target, 303)

    def rounds(self, request: Request, user: User) -> Response:
        try:
            search = search_of(request)
        except ValueError as error:
            return PlainTextResponse(f"bad search: {error}", 400)
        asked = {k: v for k, v in request.query_params.items() if v and k != "lang"}
        found: list[dict[str, Any]] = []
        with self.pool.connection() as conn:
            if asked:
                found = queries.search_rounds(conn, user.operator_id, search)
                queries.log_search(conn, user, "rounds", asked, search.player, search.round_id)
        return self.render(request, "rounds.html", user, query=asked, rounds=found)

    def round_page(self, request: Request, user: User) -> Response:
        player, round_id = request.path_params["player"], request.path_params["round_id"]
        with self.pool.connection() as conn:
            found = queries.round_detail(conn, user.operator_id, player, round_id)
            queries.log_search(conn, user, "round", {}, player, round_id)
        if found is None:
            return PlainTextResponse("no such round", 404)
        return self.render(request, "round.html", user, round=found)

    def player_page(self, request: Request, user: User) -> Response:
        player = request.path_params["player"]
        with self.pool.connection() as conn:
            found = queries.player_history(conn, user.operator_id, player)
            state = queries.player_state(conn, user.operator_id, player)
            queries.log_search(conn, user, "player", {}, player)
        return self.render(request, "player.html", user, player=player, rounds=found, **state)

    def promotions(self, request: Request, user: User) -> Response:
        return self.daily(request, user, "promotions")

    def statements(self, request: Request, user: User) -> Response:
        return self.daily(request, user, "statement")

    def daily(self, request: Request, user: User, what: str) -> Response:
        """A day's report (statement, promotions) as its page, or its JSON."""
        try:
            day = _day(request)
        except ValueError as error:
            return PlainTextResponse(f"bad day: {error}", 400)
        with self.pool.connection() as conn:
            lines = [line.as_dict() for line in DAILY[what](conn, user.operator_id, day)]
        page = "statements.html" if what == "statement" else f"{what}.html"
        return self.render(request, page, user, day=day.isoformat(), lines=lines)

    def export(self, request: Request, user: User) -> Response:
        day, what, fmt = _day(request), request.path_params["what"], request.path_params["fmt"]
        if what not in ("statement", "movements", "promotions") or fmt not in ("csv", "json"):
            return PlainTextResponse(
                "exports: statement, movements or promotions, .csv or .json", 404
            )
        with self.pool.connection() as conn:
            if what in DAILY:
                rows = [line.as_dict() for line in DAILY[what](conn, user.operator_id, day)]
            else:
                rows = reports.movements(conn, user.operator_id, day)
        body = reports.to_csv(rows) if fmt == "csv" else reports.to_json(rows)
        name = f"{what}-{user.operator_id}-{day.isoformat()}.{fmt}"
        media = "text/csv" if fmt == "csv" else "application/json"
        disposition = {"content-disposition": f'attachment; filename="{name}"'}
        return Response(body, media_type=media, headers=disposition)

    def reconcile(self, request: Request, user: User) -> Response:
        """Finance uploads the operator's movements (CSV) and sees, or downloads, every
        difference from ours (of one UTC day, or all); the CLI's ``reconcile`` in a page."""
        if request.method != "POST":
            return self.render(request, "reconcile.html", user, day="", differences=None)
        form = request.state.form
        upload, day_text = form.get("file"), str(form.get("day") or "")
        try:
            day = date.fromisoformat(day_text) if day_text else None
        except ValueError as error:
            return PlainTextResponse(f"bad day: {error}", 400)
        data = upload.file.read(MAX_UPLOAD + 1) if isinstance(upload, UploadFile) else b""
        name = upload.filename or "upload" if isinstance(upload, UploadFile) else "upload"
        try:
            if len(data) > MAX_UPLOAD:
                raise reconcile.ReconcileInputError(f"{name}: more than {MAX_UPLOAD} bytes")
            theirs = reconcile.parse_operator_csv(data, name)
        except reconcile.ReconcileInputError as error:
            response = self.render(request, "reconcile.html", user, day=day_text,
                                   differences=None, error=str(error))  # fmt: skip
            response.status_code = 400
            return response
        with self.pool.connection() as conn:
            ours = reports.movements(conn, user.operator_id, day)
            found = reconcile.differences(ours, theirs)
            asked = {"file": name, "day": day_text, "rows": len(theirs), "differences": len(found)}
            queries.log_search(conn, user, "reconcile", asked)
        if form.get("download") == "csv":
            rows = [reconcile.difference_row(line) for line in found]
            body = reports.to_csv(rows) or "player_id,tx_id,difference\n"
            disposition = f'attachment; filename="differences-{user.operator_id}.csv"'
            return Response(body, media_type="text/csv",
                            headers={"content-disposition": disposition})  # fmt: skip
        return self.render(request, "reconcile.html", user, day=day_text, differences=found,
                           compared=len(theirs), ours=len(ours))  # fmt: skip

    def flagged(self, request: Request, user: User) -> Response:
        s = self.settings
        with self.pool.connection() as conn:
            found = queries.flagged(conn, user.operator_id, s.big_win_amount, s.big_win_multiple)
        limits = {"big_win_amount": s.big_win_amount, "big_win_multiple": s.big_win_multiple}
        return self.render(request, "flagged.html", user, flagged=found, **limits)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def local_target(target: str | None) -> str:
    """Where a login may send the browser: a path of this site, else ``/``. Browsers read a
    backslash as a slash and drop tabs and newlines, so ``/\\host`` or ``/<tab>/host`` would
    leave the site like ``//host``.

    >>> [local_target(t) for t in ("/rounds?player=p", "//evil", "/\\evil", "https://evil")]
    ['/rounds?player=p', '/', '/', '/']
    """
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    if "\\" in target or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in target):
        return "/"
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc else "/"


def search_of(request: Request) -> queries.Search:
    q = request.query_params

    def number(name: str) -> int | None:
        value = q.get(name, "").strip()
        return int(value) if value.isdigit() else None

    def moment(name: str) -> datetime | None:
        value = q.get(name, "").strip()
        if not value:
            return None
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)  # noqa: UP017

    return queries.Search(
        player=q.get("player") or None, round_id=q.get("round_id") or None,
        since=moment("from"), until=moment("to"), brand=q.get("brand") or None,
        table=q.get("table") or None, outcome=q.get("outcome") or None,
        min_amount=number("min_amount"), max_amount=number("max_amount"),
    )  # fmt: skip


def _day(request: Request) -> date:
    value = request.query_params.get("day")
    return date.fromisoformat(value) if value else datetime.now(timezone.utc).date()  # noqa: UP017


def create_app(
    settings: BackofficeSettings, authenticator: Authenticator | None = None
) -> Starlette:
    bo = Backoffice(settings, authenticator)
    metrics.announce_build("backoffice-web")
    pages: list[tuple[str, str, str, Handler]] = [
        ("/rounds", "rounds", "rounds", bo.rounds),
        ("/rounds/{player}/{round_id}", "round", "rounds", bo.round_page),
        ("/players/{player}", "player", "players", bo.player_page),
        ("/statements", "statements", "statements", bo.statements),
        ("/flagged", "flagged", "flagged", bo.flagged),
        ("/promotions", "promotions", "promotions", bo.promotions),
    ]
    routes = [
        Route("/login", bo.login, methods=["GET", "POST"]),
        Route("/logout", bo.logout),
        Route("/", bo.page("home", "flagged", bo.home)),
        Route("/exports/{what:str}.{fmt:str}", bo.page("export", "exports", bo.export)),
        Route(
            "/reconcile", bo.page("reconcile", "reconcile", bo.reconcile), methods=["GET", "POST"]
        ),
    ]
    for path, name, area, handler in pages:
        endpoint = bo.page(name, area, handler)
        # The round page's URL is permanent; the JSON of each page is the same path + ".json".
        routes += [Route(path + ".json", endpoint), Route(path, endpoint)]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await run_in_threadpool(db.upgrade, settings.dsn)
        bo.pool.open()
        yield
        bo.pool.close()

    return Starlette(routes=routes, lifespan=lifespan)


def start_metrics(settings: BackofficeSettings) -> WSGIServer | None:
    """The web back office's /metrics on a port of its own (never the web port, where anyone
    could read them without a login); None when ``web_metrics_port`` is 0."""
    if not settings.web_metrics_port:
        return None
    server, _ = start_http_server(settings.web_metrics_port, addr=settings.web_metrics_host)
    return server


def serve(settings: BackofficeSettings) -> None:
    import uvicorn

    app = create_app(settings)
    start_metrics(settings)
    print(f"back office: http://{settings.host}:{settings.port}/", flush=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")
