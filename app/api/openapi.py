"""The OpenAPI document as the API's contract, completed in one place after Litestar generates it
(:func:`complete_contract`, called by ``create_app``), and the path parameters' rules, which the same module
checks on every request (:func:`check_params`, in ``before_request``), so the document and the behaviour
cannot drift apart:

- ``securitySchemes``: the API key as an HTTP bearer token, required on every route but the public ones (/health
  and the documents), so the docs page can send the key;
- the path parameters' rules (the vault-name pattern, a session id's length, a skill name);
- every status a route can answer, each error with the one error body (``ErrorBody``): 400 unreadable body or
  cursor, 401 / 403 / 429 for keys, 404 / 410 for vaults, 409 conflicts, 413 sizes, 422 invalid input, 503
  database unavailable. Litestar's own 400 schema (a different shape) is replaced by it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, get_args

from litestar import Litestar, Request
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from pydantic import BaseModel

from app.api.body import NOT_BLANK, takes_json
from app.errors import InvalidInput

BEARER = "BearerAuth"
SECURITY_SCHEMES = {BEARER: {
    "type": "http", "scheme": "bearer", "bearerFormat": "mvk_<id>_<secret>",
    "description": "An API key (`memvault key create`); also accepted as `X-API-Key: <key>`, or as the password "
                   "of HTTP Basic."}}

# Each path parameter's rule: the JSON Schema the document shows and what check_path_params enforces.
PATH_PARAMS: dict[str, dict[str, Any]] = {
    "vault": {"type": "string", "minLength": 1, "maxLength": 63, "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
              "description": "The vault's name: a letter or digit, then letters, digits, '_', '.', '-'."},
    "session": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"^[^\x00]+$",
                "description": "The session's id, chosen by the client (1-200 characters, no NUL)."},
    "name": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": NOT_BLANK,
             "description": "The skill's name (1-200 characters, not only spaces)."},
}
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?")
_RULES = {name: (re.compile(rule["pattern"]), rule["minLength"], rule["maxLength"])
          for name, rule in PATH_PARAMS.items()}

ERROR = {"$ref": "#/components/schemas/ErrorBody"}
DESCRIPTIONS = {
    400: "The body is not JSON (invalid text, NaN, a number too large, a lone surrogate, a form), or a cursor is "
         "not one this list issued",
    401: "No API key, or one that is not valid (one message for every reason)",
    403: "The key may not do this (its scope, or it is bound to another vault)",
    404: "No such vault, memory, session, entity or item",
    409: "It conflicts with what is stored (a name taken, a state that does not allow it)",
    410: "The vault was deleted (soft): it refuses use until it is purged",
    413: "The body, a batch or a text is larger than the configured limit",
    422: "The request's input is invalid (each field named)",
    429: "Too many failed API keys from this client or at this key: Retry-After says when to try again",
    503: "The database is unreachable for now (Retry-After says when to retry)",
}
WRITES = {"post", "put", "patch", "delete"}


def _time_queries(handler: HTTPRouteHandler) -> list[str]:
    """The query parameters of a handler that are times (``datetime``)."""
    names = []
    for field in handler.parsed_fn_signature.parameters.values():
        if datetime in (field.annotation, *get_args(field.annotation)):
            names.append(getattr(field.kwarg_definition, "query", None) or field.name)
    return names


async def check_params(request: Request) -> None:
    """422 for a path parameter outside its documented rule, or a time in the query that is not ISO 8601 text
    (Litestar would read ``0.5`` as a Unix time), before any lookup."""
    handler = request.route_handler
    for name in _time_queries(handler) if isinstance(handler, HTTPRouteHandler) else []:
        raw = request.query_params.get(name)
        if raw is not None and not _ISO_TIME.fullmatch(raw):
            raise InvalidInput(f"{name}: {raw[:40]!r} is not an ISO 8601 time",
                               hint="e.g. 2026-03-01T12:00:00Z or 2026-03-01T12:00:00+08:00",
                               fields=[{"field": name, "message": "expected an ISO 8601 date-time"}])
    for name, value in request.path_params.items():
        rule = _RULES.get(name)
        if rule is None or not isinstance(value, str):
            continue
        pattern, low, high = rule
        if not low <= len(value) <= high or not pattern.search(value):
            raise InvalidInput(f"{name}: {value[:80]!r} is not a valid {name} ({PATH_PARAMS[name]['description']})",
                               fields=[{"field": name, "message": PATH_PARAMS[name]["description"]}])


def _statuses(method: str, path: str, *, public: bool, body: bool, cursor: bool, params: bool) -> set[int]:
    codes = {503}
    if params or body:
        codes.add(422)
    if not public:
        codes |= {401, 403, 429}
    if "{" in path or body:  # a vault, memory, session... in the path, or a vault named in the body
        codes.add(404)
    if "{vault}" in path:
        codes.add(410)
    if body or method == "post":
        codes |= {400, 413}
    if cursor:
        codes.add(400)
    if method in WRITES:
        codes.add(409)
    return codes


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models in a (possibly Optional or Annotated) annotation."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models(arg)]


def _request_models(app: Litestar, components: dict[str, Any]) -> None:
    """The request bodies' schemas as pydantic validates them: Litestar's rendering of a model drops its
    ``pattern``s, ``additionalProperties: false`` (extra="forbid") and ``json_schema_extra``, so a client (and
    schemathesis) would send what the API refuses."""
    seen: set[type[BaseModel]] = set()
    for route in app.routes:
        for handler, _ in getattr(route, "route_handler_map", {}).values():
            data = handler.parsed_fn_signature.parameters.get("data")
            for model in _models(data.annotation) if data is not None and takes_json(handler) else []:
                if model in seen:
                    continue
                seen.add(model)
                schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(schema.pop("$defs", {}))
                components[model.__name__] = schema


def complete_contract(app: Litestar) -> None:
    """Complete the document Litestar generated (see the module's docstring). Call once, after the app is built."""
    from litestar._openapi.plugin import OpenAPIPlugin

    document = app.plugins.get(OpenAPIPlugin).provide_openapi_schema()
    components = document.setdefault("components", {})
    components.setdefault("securitySchemes", {}).update(SECURITY_SCHEMES)
    assert "ErrorBody" in components.get("schemas", {}), "a route must document ERROR_RESPONSES"
    _request_models(app, components["schemas"])
    for route in app.routes:
        if isinstance(route, HTTPRoute) and route.path_format in document.get("paths", {}):
            item = document["paths"][route.path_format]
            for method, (handler, _) in route.route_handler_map.items():
                if (operation := item.get(method.lower())) is not None:
                    _complete_operation(operation, method.lower(), route.path_format, handler)


def _complete_operation(operation: dict[str, Any], method: str, path: str, handler: HTTPRouteHandler) -> None:
    public = bool(handler.opt.get("public"))
    if not public:
        operation["security"] = [{BEARER: []}]
    parameters = operation.get("parameters", [])
    for param in parameters:
        if param.get("in") == "path" and param["name"] in PATH_PARAMS:
            param["schema"] = dict(PATH_PARAMS[param["name"]])
        elif param.get("in") == "path" and param.get("schema", {}).get("type") == "integer":
            param["schema"].update({"format": "int64", "minimum": -(2**63 - 1), "maximum": 2**63 - 1})
    data = handler.parsed_fn_signature.parameters.get("data")
    if "requestBody" in operation and data is not None and data.is_optional:
        operation["requestBody"]["required"] = False  # no body: the defaults
    codes = _statuses(method, path, public=public, body=takes_json(handler) or "requestBody" in operation,
                      cursor=any(p.get("name") == "cursor" for p in parameters), params=bool(parameters))
    responses = operation.setdefault("responses", {})
    for code in sorted(codes):
        if str(code) not in responses or code == 400:  # Litestar's own 400 has another shape
            responses[str(code)] = {"description": DESCRIPTIONS[code],
                                    "content": {"application/json": {"schema": ERROR}}}
    for code in {429, 503} & codes:
        responses[str(code)]["headers"] = {"Retry-After": {
            "description": "Seconds to wait before retrying", "schema": {"type": "integer"}}}
    if 401 in codes:
        responses["401"]["headers"] = {"WWW-Authenticate": {
            "description": "The schemes the API accepts", "schema": {"type": "string"}}}
