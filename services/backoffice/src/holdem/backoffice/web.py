"""The web back office (Starlette, server-rendered Jinja2): login, rounds, a round's replay page,
a player's history, daily statements and exports, flagged activity; JSON beside every page."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from psycopg_pool import ConnectionPool
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from holdem.backoffice import db, metrics, queries, reports
from holdem.backoffice.auth import Authenticator, PasswordAuthenticator, User
from holdem.backoffice.i18n import BET_TERMS, LANGUAGES, label
from holdem.backoffice.settings import BackofficeSettings
from holdem.core.cards import Card
from holdem.core.currencies import money as currency_money

COOKIE = "holdem_bo"
SESSION_S = 8 * 3600
Handler = Callable[[Request, User], Any]


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
        self.key = (settings.session_secret or secrets.token_hex(32)).encode()
        self.templates = Environment(
            loader=FileSystemLoader(Path(__file__).parent / "templates"),
            autoescape=select_autoescape(["html"]),
        )
        self.templates.filters.update(money=money, card=card)

    # sessions -------------------------------------------------------------------------------
    def _sign(self, text: str) -> str:
        return hmac.new(self.key, text.encode(), hashlib.sha256).hexdigest()

    def cookie_for(self, username: str) -> str:
        text = f"{username}|{int(time.time()) + SESSION_S}"
        return f"{text}|{self._sign(text)}"

    def user_of(self, request: Request) -> User | None:
        value = request.cookies.get(COOKIE, "")
        text, _, signature = value.rpartition("|")
        if not text or not hmac.compare_digest(self._sign(text), signature):
            return None
        username, _, expires = text.partition("|")
        if not expires.isdigit() or int(expires) < time.time():
            return None
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT role, operator_id FROM users WHERE username = %s", (username,)
            ).fetchone()
        return User(username, row[0], row[1]) if row else None

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
                response: Response = RedirectResponse(
                    f"/login?next={quote(str(request.url.path))}", 303
                )
            elif not user.may(area):
                response = PlainTextResponse(f"forbidden: {user.role} may not open {area}", 403)
            else:
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
                               next=request.query_params.get("next", "/"))  # fmt: skip
        form = await request.form()
        username, password = str(form.get("username", "")), str(form.get("password", ""))
        target = str(form.get("next") or "/")
        target = target if target.startswith("/") and not target.startswith("//") else "/"

        def check() -> User | None:
            with self.pool.connection() as conn:
                return self.authenticator.authenticate(conn, username, password)

        user = await run_in_threadpool(check)
        if user is None:
            return self.render(request, "login.html", None, error="login failed", next=target)
        response = RedirectResponse(target, 303)
        response.set_cookie(COOKIE, self.cookie_for(user.username), max_age=SESSION_S,
                            httponly=True, samesite="lax")  # fmt: skip
        return response

    async def logout(self, request: Request) -> Response:
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE)
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
            queries.log_search(conn, user, "player", {}, player)
        return self.render(request, "player.html", user, player=player, rounds=found)

    def statements(self, request: Request, user: User) -> Response:
        try:
            day = _day(request)
        except ValueError as error:
            return PlainTextResponse(f"bad day: {error}", 400)
        with self.pool.connection() as conn:
            lines = [line.as_dict() for line in reports.statement(conn, user.operator_id, day)]
        return self.render(request, "statements.html", user, day=day.isoformat(), lines=lines)

    def export(self, request: Request, user: User) -> Response:
        day, what, fmt = _day(request), request.path_params["what"], request.path_params["fmt"]
        if what not in ("statement", "movements") or fmt not in ("csv", "json"):
            return PlainTextResponse("exports: statement or movements, .csv or .json", 404)
        with self.pool.connection() as conn:
            if what == "statement":
                rows = [line.as_dict() for line in reports.statement(conn, user.operator_id, day)]
            else:
                rows = reports.movements(conn, user.operator_id, day)
        body = reports.to_csv(rows) if fmt == "csv" else reports.to_json(rows)
        name = f"{what}-{user.operator_id}-{day.isoformat()}.{fmt}"
        media = "text/csv" if fmt == "csv" else "application/json"
        disposition = {"content-disposition": f'attachment; filename="{name}"'}
        return Response(body, media_type=media, headers=disposition)

    def flagged(self, request: Request, user: User) -> Response:
        s = self.settings
        with self.pool.connection() as conn:
            found = queries.flagged(conn, user.operator_id, s.big_win_amount, s.big_win_multiple)
        limits = {"big_win_amount": s.big_win_amount, "big_win_multiple": s.big_win_multiple}
        return self.render(request, "flagged.html", user, flagged=found, **limits)

    async def metrics_page(self, request: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


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
    ]
    routes = [
        Route("/login", bo.login, methods=["GET", "POST"]),
        Route("/logout", bo.logout),
        Route("/metrics", bo.metrics_page),
        Route("/", bo.page("home", "flagged", bo.home)),
        Route("/exports/{what:str}.{fmt:str}", bo.page("export", "exports", bo.export)),
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


def serve(settings: BackofficeSettings) -> None:
    import uvicorn

    app = create_app(settings)
    print(f"back office: http://{settings.host}:{settings.port}/", flush=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")
