"""The one reader of request bodies: every route that takes JSON gets its body through :func:`read_json_body`,
which runs before the handler (``create_app``'s ``before_request``) and answers 400 for anything that is not
strict JSON text:

- bytes that are not UTF-8, and text that is not JSON (a form, XML, plain text, a truncated document);
- ``NaN``, ``Infinity`` and numbers too large for a double (``1e999``), which Python's decoder would accept;
- strings holding a lone UTF-16 surrogate (``"\\ud800"``), which no database text and no UTF-8 encoder can hold.

JSON of the wrong shape (a missing field, a number out of range) is the route's validation to refuse, with 422
naming each field. The value decoded here is the one Litestar hands to the handler's ``data`` (it reads
``request.json()``, which this fills), so a body is decoded once and by these rules only.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.handlers import HTTPRouteHandler
from litestar.utils.scope.state import ScopeState

from app import strict_json
from app.api.fields import NOT_BLANK, IsoTime, Real  # noqa: F401  (routes import them from here too)
from app.errors import BadRequest, InvalidInput

SEND_JSON = "send a JSON document (UTF-8, content-type application/json) of the shape /docs shows"


def takes_json(handler: HTTPRouteHandler) -> bool:
    """Whether a route reads a JSON body: a ``data`` parameter not declared as a form."""
    param = handler.parsed_fn_signature.parameters.get("data")
    if param is None:
        return False
    media_type = getattr(param.kwarg_definition, "media_type", None)
    return media_type in (None, RequestEncodingType.JSON)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _number(text: str) -> float | int:
    """A JSON number with a fraction or an exponent: a double, refused when too large for one; an integral one
    (``200.0``, ``1e2``) is the integer it equals, as JSON Schema counts it (an integer field takes it)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for a double")
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def decode_strict(raw: bytes) -> Any:
    """The JSON value of ``raw``; :class:`BadRequest` for anything but strict JSON (``app.strict_json``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"the body is not valid UTF-8 ({exc.reason} at byte {exc.start})", hint=SEND_JSON) from exc
    try:
        return strict_json.loads(text, integral_as_int=True)
    except RecursionError as exc:
        raise InvalidInput("the JSON body is nested too deeply",
                           hint="flatten it: metadata may nest at most 16 levels") from exc
    except strict_json.NotStrictJSON as exc:
        raise BadRequest(f"the body {exc}", hint=SEND_JSON) from exc


async def read_json_body(request: Request) -> None:
    """Decode the body of a route that takes JSON, by :func:`decode_strict`, before Litestar reads it."""
    handler = request.route_handler
    if not isinstance(handler, HTTPRouteHandler) or not takes_json(handler):
        return
    raw = await request.body()
    if raw:
        ScopeState.from_scope(request.scope).json = decode_strict(raw)
