"""How a person signs in to the inspector in a browser: the API key typed once into a form, kept in a cookie.

``POST /inspect/login`` checks the key (``app.auth.authenticate``) and sets it as the cookie ``memvault_key``:
HttpOnly (no script could read it, and the pages run none), SameSite=Strict (no other site's page can make the
browser send it: the review buttons' POSTs cannot be forged cross-site), Path=/inspect (the API never sees it) and
for 8 hours. A refused key gets the same form back (401, or 429 after too many failures) with the reason and
the page it was going to kept. ``POST /inspect/logout`` drops it. The API's own guard (``app.api.guard``) reads
that cookie on ``/inspect`` as it reads a key header anywhere, so every inspector page is checked like any route
(vault binding; GET read, POST write). Refused, a browser (it asks for text/html) is sent to the form with the
reason; any other client gets the API's 401 / 403. A POST must also come from the inspector's own pages (same
origin).
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

from app.api.errors import memvault_error_handler
from app.api.guard import INSPECTOR_COOKIE
from app.auth import Principal, authenticate_limited, parse_key
from app.auth_limit import forwarded_for
from app.errors import Forbidden, MemvaultError
from app.interfaces.inspector_html import e, page

MAX_AGE = 8 * 3600


async def same_origin(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """Defence in depth beside SameSite=Strict: a browser's POST names its origin; it must be this host."""
    if connection.scope["method"] in ("GET", "HEAD"):  # type: ignore[typeddict-item]
        return
    origin = connection.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc == connection.headers.get("host"):
        return
    if not origin and connection.headers.get("sec-fetch-site") in (None, "same-origin"):
        return
    raise Forbidden("a change in the inspector must come from its own pages",
                    hint="use the inspector's buttons, or the REST API with a key")


def refused(request: Request, exc: MemvaultError) -> Response:
    """A browser goes to the sign-in form (with why); a script keeps the API's JSON answer."""
    if "text/html" not in request.headers.get("accept", ""):
        return memvault_error_handler(request, exc)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Redirect(f"/inspect/login?next={quote(target)}&why={quote(exc.message)}", status_code=303)


def principal_of(request: Request) -> Principal:
    return request.state.principal


class InspectorLoginController(Controller):
    path = "/inspect"
    include_in_schema = False
    opt = {"public": True}  # the way in: no key yet

    @get("/login")
    async def form(self, next: str = "/inspect", why: str | None = None) -> Response:
        return sign_in_page(next, why)

    @post("/login")
    async def login(self, request: Request,
                    data: dict[str, str] = Body(media_type=RequestEncodingType.URL_ENCODED)) -> Response:
        key, target = (data.get("key") or "").strip(), _local(data.get("next") or "/inspect")
        services = request.app.state.services
        try:
            await authenticate_limited(services.db, services.auth_attempts, key or None,
                                       services.client_address(request.client.host if request.client else None,
                                                               forwarded_for(request.scope)),
                                       services.verified_secrets)
        except MemvaultError as exc:  # the form again, with why, where to go after, and the key's public part
            page = sign_in_page(target, exc.message, typed=key, status=exc.status)
            page.headers.update(exc.headers or {})
            return page
        response = Redirect(target, status_code=303)
        response.cookies.append(Cookie(key=INSPECTOR_COOKIE, value=key, path="/inspect", max_age=MAX_AGE,
                                       httponly=True, samesite="strict", secure=request.url.scheme == "https"))
        return response

    @post("/logout")
    async def logout(self) -> Response:
        response = Redirect("/inspect/login", status_code=303)
        response.cookies.append(Cookie(key=INSPECTOR_COOKIE, value="", path="/inspect", max_age=0, httponly=True,
                                       samesite="strict"))
        return response


def sign_in_page(target: str, why: str | None = None, *, typed: str = "", status: int = 200) -> Response:
    """The sign-in form; after a refused key, the same form with the reason above it, still going to ``target``.
    The key field starts empty (a secret is never sent back into a page); what was typed is named by its public
    part, the key id, so a person sees which key was refused."""
    note = f"<p class='err' id='why'>{e(why)}</p>" if why else ""
    if typed:
        try:
            seen = f"the key mvk_{e(parse_key(typed)[0])}_… was refused; type the whole key again"
        except MemvaultError:
            seen = "what was typed is not the shape of a memvault key: mvk_&lt;id&gt;_&lt;secret&gt;"
        note += f"<p class='f' id='refused-key'>{seen}.</p>"
    body = (note + "<form method='post' action='/inspect/login'>"
            f"<input type='hidden' name='next' value='{e(_local(target))}'>"
            "<label>API key <input id='key' name='key' type='password' size='60' autocomplete='off' "
            f"placeholder='mvk_...'{' autofocus' if why else ''}></label> <button id='sign-in'>Sign in</button>"
            "</form><p class='f'>A key with scope read shows the pages; approving or rejecting a review needs "
            "write. `make serve` prints a local admin key; `memvault key create --scope read` makes another.</p>")
    return page("Sign in", body, status=status, signed_in=False)


def _local(target: str) -> str:
    """Only a path of the inspector itself: never an open redirect."""
    return target if target.startswith("/inspect") and "//" not in target and "\\" not in target else "/inspect"
