"""The auth guard, applied to the whole app (``create_app``), so every route is born authenticated.

Open without a key: handlers whose ``opt`` (or their controller's or router's) has ``public`` (``/health``, the
OpenAPI documents under ``/docs``). Every other request needs an API key (``Authorization: Bearer <key>``,
``X-API-Key: <key>``, HTTP Basic with the key as password, or on ``/inspect`` the inspector's sign-in cookie):
- the scope comes from the method (GET/HEAD read; POST, PUT, PATCH, DELETE write) unless the handler says
  ``opt={"scope": ...}`` (recall is a POST that reads);
- a route with ``{vault}`` in its path needs a key for that vault (or for every vault);
- a route without one acts across vaults and needs a key for every vault, unless the handler declares
  ``opt={"cross_vault": "filter"}``: then it takes any key and must itself keep to what ``principal`` may see.
401 for a missing, malformed, unknown, wrong or revoked key (with WWW-Authenticate; one message for all but
the missing one); 429 + Retry-After after too many failed keys per key id or client address
(``app.auth_limit``; the client address is the peer's, or X-Forwarded-For's behind a trusted proxy); 403 for a
valid key that may not (scope, vault). The verified ``Principal`` is in ``request.state.principal`` (handlers take
``principal``), and its key id becomes the actor of the request's transactions (audit).
"""

from __future__ import annotations

import base64
import binascii

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from app.auth import Principal, authenticate_limited, invalid_key
from app.auth_limit import forwarded_for
from app.db.connector import act_as
from app.errors import Unauthorized

INSPECTOR_COOKIE = "memvault_key"
METHOD_SCOPE = {"GET": "read", "HEAD": "read", "OPTIONS": "read", "POST": "write", "PUT": "write",
                "PATCH": "write", "DELETE": "write"}


def presented_key(connection: ASGIConnection) -> str | None:
    """The key a request carries, from any of the accepted headers. Whatever is wrong with the header, the
    refusal is the one :func:`app.auth.invalid_key`: it never repeats what was sent (a key pasted with a tab, or
    without its scheme, would otherwise come back in the 401)."""
    auth = connection.headers.get("authorization")
    if auth and auth.strip():
        kind, value = [*auth.split(None, 1), ""][:2]  # the scheme, then the rest (after a space or a tab)
        if kind.lower() == "bearer":
            return value.strip() or None
        if kind.lower() == "basic":
            try:
                return base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")[2]
            except (binascii.Error, UnicodeDecodeError) as exc:
                raise invalid_key() from exc
        raise invalid_key()
    key = connection.headers.get("x-api-key")
    if key is None and connection.scope["path"].startswith("/inspect"):
        # the inspector's sign-in cookie (app.interfaces.inspector_auth): HttpOnly, SameSite=Strict, Path=/inspect
        key = connection.cookies.get(INSPECTOR_COOKIE)
    return key


def required_scope(connection: ASGIConnection, handler: BaseRouteHandler) -> str:
    return handler.opt.get("scope") or METHOD_SCOPE.get(connection.scope["method"], "write")  # type: ignore[typeddict-item]


async def require_key(connection: ASGIConnection, handler: BaseRouteHandler) -> None:
    if handler.opt.get("public"):
        return
    services = connection.app.state.services
    address = services.client_address(connection.client.host if connection.client else None,
                                      forwarded_for(connection.scope))
    try:
        presented = presented_key(connection)
    except Unauthorized:
        services.auth_attempts.check(None, address)
        services.auth_attempts.failed(None, address)
        raise
    principal: Principal = await authenticate_limited(services.db, services.auth_attempts, presented, address,
                                                      services.verified_secrets)
    vault = connection.path_params.get("vault")
    if vault is None and handler.opt.get("cross_vault") == "filter":
        principal.require(principal.vault_name, required_scope(connection, handler))
    else:
        principal.require(vault, required_scope(connection, handler))
    connection.state.principal = principal
    act_as(principal.actor)


def provide_principal(request: Request) -> Principal:
    return request.state.principal
