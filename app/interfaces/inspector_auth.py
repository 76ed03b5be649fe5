"""How a person signs in to the inspector in a browser: the API key typed once into a form, kept in a cookie.

``POST /inspect/login`` checks the key (``app.auth.authenticate``) and sets it as the cookie ``memvault_key``:
HttpOnly (no script could read it, and the pages run none), SameSite=Strict (no other site's page can make the
browser send it: the review buttons' POSTs cannot be forged cross-site), Path=/inspect (the API never sees it) and
for 8 hours. ``POST /inspect/logout`` drops it. A request without a usable cookie may still carry the key the API
way (``Authorization: Bearer``, ``X-API-Key`` or Basic), for scripts and tests; a browser without either is sent to
the form. Every inspector page checks the key's vault and scope (GET read, POST write) as the API guard does.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from litestar import Controller, Request, Response, get, post
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie
from litestar.enums import RequestEncodingType
from litestar.handlers.base import BaseRouteHandler
from litestar.params import Body
from litestar.response import Redirect

from app.auth import Principal, authenticate
from app.db.connector import act_as
from app.errors import Forbidden, MemvaultError, Unauthorized

COOKIE = "memvault_key"
MAX_AGE = 8 * 3600


class LoginRequired(Exception):
    """No key, or one that cannot open this page: the browser goes to the form (with why)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


async def inspector_guard(connection: ASGIConnection, handler: BaseRouteHandler) -> None:
    from app.api.guard import presented_key

    key = connection.cookies.get(COOKIE) or presented_key(connection)
    if not key:
        raise LoginRequired("sign in with an API key")
    try:
        principal = await authenticate(connection.app.state.services.db, key)
        scope = "read" if connection.scope["method"] in ("GET", "HEAD") else "write"  # type: ignore[typeddict-item]
        vault = connection.path_params.get("vault")
        if vault is not None:
            principal.require(vault, scope)
        elif scope != "read":
            principal.require(None, scope)
    except (Unauthorized, Forbidden) as exc:
        raise LoginRequired(exc.message) from exc
    if scope != "read" and not _same_origin(connection):
        raise LoginRequired("a change must come from the inspector's own pages")
    connection.state.principal = principal
    act_as(principal.actor)


def _same_origin(connection: ASGIConnection) -> bool:
    """Defence in depth beside SameSite=Strict: a browser's POST names its origin; it must be this host."""
    origin = connection.headers.get("origin")
    if not origin or origin == "null":
        return connection.headers.get("sec-fetch-site") in (None, "same-origin")
    return urlsplit(origin).netloc == connection.headers.get("host")


def login_redirect(request: Request, exc: LoginRequired) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Redirect(f"/inspect/login?next={quote(target)}&why={quote(exc.why)}", status_code=303)


def principal_of(request: Request) -> Principal:
    return request.state.principal


class InspectorLoginController(Controller):
    path = "/inspect"
    include_in_schema = False
    opt = {"public": True}  # the API guard lets these through: they are how a browser gets in

    @get("/login")
    async def form(self, next: str = "/inspect", why: str | None = None) -> Response:
        from app.interfaces.inspector import _e, _page

        note = f"<p class='err'>{_e(why)}</p>" if why else ""
        body = (note + "<form method='post' action='/inspect/login'>"
                f"<input type='hidden' name='next' value='{_e(_local(next))}'>"
                "<label>API key <input id='key' name='key' type='password' size='60' autocomplete='off' "
                "placeholder='mvk_...'></label> <button id='sign-in'>Sign in</button></form>"
                "<p class='f'>A key with scope read shows the pages; approving or rejecting a review needs write. "
                "`make serve` prints a local admin key; `memvault key create --scope read` makes another.</p>")
        return _page("Sign in", body)

    @post("/login")
    async def login(self, request: Request,
                    data: dict[str, str] = Body(media_type=RequestEncodingType.URL_ENCODED)) -> Response:
        from app.interfaces.inspector import _e, _page

        key, target = (data.get("key") or "").strip(), _local(data.get("next") or "/inspect")
        try:
            await authenticate(request.app.state.services.db, key or None)
        except MemvaultError as exc:
            return _page("Sign in", f"<p class='err'>{_e(exc.message)}</p><p><a href='/inspect/login?next="
                                    f"{_e(quote(target))}'>try again</a></p>", status=401)
        response = Redirect(target, status_code=303)
        response.cookies.append(Cookie(key=COOKIE, value=key, path="/inspect", max_age=MAX_AGE, httponly=True,
                                       samesite="strict", secure=request.url.scheme == "https"))
        return response

    @post("/logout")
    async def logout(self) -> Response:
        response = Redirect("/inspect/login", status_code=303)
        response.cookies.append(Cookie(key=COOKIE, value="", path="/inspect", max_age=0, httponly=True,
                                       samesite="strict"))
        return response


def _local(target: str) -> str:
    """Only a path of the inspector itself: never an open redirect."""
    return target if target.startswith("/inspect") and "//" not in target and "\\" not in target else "/inspect"
