"""Application errors to HTTP, in one place: a status and one JSON body shape for every error of every route.

``{"error": kind, "detail": what was wrong, "where": the request (and field) it was in, "hint": how to fix it or
null, "fields": [{"field", "message"}] for input that failed validation}``. A fault of ours (5xx) is logged with its
traceback and answered without internals.
"""

from __future__ import annotations

import logging

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.spec import Example
from litestar.openapi.datastructures import ResponseSpec
from pydantic import BaseModel, Field

from app.errors import MemvaultError

log = logging.getLogger(__name__)


class FieldProblem(BaseModel):
    field: str = Field(description="Dotted path of the field in the body, or the query / path parameter's name.")
    message: str


class ErrorBody(BaseModel):
    error: str = Field(description="The kind of error: NotFound, InvalidInput, Conflict, PayloadTooLarge...")
    detail: str = Field(description="What was wrong.")
    where: str = Field(description="The request it was in (method and path).")
    hint: str | None = Field(default=None, description="How to fix it.")
    fields: list[FieldProblem] = Field(default_factory=list, description="Each field that failed validation.")


def _body(request: Request, status: int, error: str, detail: str, hint: str | None = None,
          fields: list[dict] | None = None, headers: dict[str, str] | None = None) -> Response:
    body = ErrorBody(error=error, detail=detail, where=f"{request.method} {request.url.path}", hint=hint,
                     fields=[FieldProblem(**f) for f in fields or []])
    return Response(body.model_dump(mode="json"), status_code=status, media_type=MediaType.JSON, headers=headers)


# What a response says of an error whose own text must not reach a client: a fault of ours (5xx: it may hold a
# traceback's words, a host, a model server's URL) or a database server's message (it names tables, constraints,
# functions). The log keeps the whole text.
PUBLIC = {
    409: ("the request conflicts with what is stored", "read the resource again and retry"),
    422: ("the request's input was refused by the database's constraints", "see /docs for the request schema"),
    500: ("the server failed on this request", "retry later; the server log has the details"),
    502: ("a model backend failed on this request", "retry later; the server log has the details"),
    503: ("the service is unavailable for now", "retry after the seconds Retry-After gives"),
}


def public_text(exc: MemvaultError) -> tuple[str, str | None]:
    """What a client may read of an error: its own message and hint, or (a 5xx, a database server's words) the
    generic ones of its status. Every interface that answers over HTTP (the API, the inspector) shows this."""
    if exc.status >= 500 or exc.verbatim:
        return PUBLIC.get(exc.status, PUBLIC[500] if exc.status >= 500 else PUBLIC[422])
    return exc.message, exc.hint


def memvault_error_handler(request: Request, exc: MemvaultError) -> Response:
    if exc.status >= 500 and exc.status != 503:
        log.error("request failed: %s", exc, exc_info=exc)
    elif exc.status == 503:
        log.warning("unavailable: %s %s: %s", request.method, request.url.path, exc.message)
    elif exc.verbatim:
        log.info("refused by the database: %s %s: %s", request.method, request.url.path, exc.message)
    detail, hint = public_text(exc)
    return _body(request, exc.status, type(exc).__name__, detail, hint, getattr(exc, "fields", None),
                 headers=exc.headers)


def unicode_error_handler(request: Request, exc: UnicodeDecodeError) -> Response:
    """A body that is not UTF-8 (JSON must be)."""
    return _body(request, 400, "BadRequest", f"the body is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                 "send UTF-8 encoded JSON")


def recursion_error_handler(request: Request, exc: RecursionError) -> Response:
    """A body nested so deep that decoding it exhausts the interpreter's stack."""
    return _body(request, 422, "InvalidInput", "the JSON body is nested too deeply",
                 "flatten it: metadata may nest at most 16 levels")


def validation_error_handler(request: Request, exc: ValidationException) -> Response:
    """Field errors as 422 (Litestar's default is 400), each naming the field and what is wrong."""
    fields = [{"field": str(e.get("key") or e.get("source") or "body"), "message": str(e.get("message"))}
              for e in (exc.extra or []) if isinstance(e, dict)]
    detail = "; ".join(f"{f['field']}: {f['message']}" for f in fields) or str(exc.detail)
    return _body(request, 422, "InvalidInput", detail, "see /docs for the request schema", fields)


def http_error_handler(request: Request, exc: HTTPException) -> Response:
    """Litestar's own refusals (no route, a method the path does not take (with its ``Allow`` header), a body
    over the size limit, a body Litestar could not read), in the one error shape."""
    hint = None
    if exc.status_code == 404:
        hint = "check the path; the routes are listed at /docs"
    elif exc.status_code == 405:
        hint = "this path does not take this method; see /docs"
    elif exc.status_code == 400:
        hint = "see /docs for the request schema"
    if exc.status_code >= 500:
        log.error("request failed: %s %s", request.method, request.url.path, exc_info=exc)
        return _body(request, exc.status_code, "InternalError", *PUBLIC[500])
    kind = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLarge"}.get(
        exc.status_code, type(exc).__name__.removesuffix("Exception") or "HTTPError")
    return _body(request, exc.status_code, kind, str(exc.detail), hint, headers=exc.headers or None)


def internal_error_handler(request: Request, exc: Exception) -> Response:
    log.error("request failed: %s %s", request.method, request.url.path, exc_info=exc)
    return _body(request, 500, "InternalError", *PUBLIC[500])


EXCEPTION_HANDLERS = {
    MemvaultError: memvault_error_handler,
    ValidationException: validation_error_handler,
    HTTPException: http_error_handler,
    RecursionError: recursion_error_handler,
    UnicodeDecodeError: unicode_error_handler,
    Exception: internal_error_handler,
}


def _spec(description: str, error: str, detail: str, hint: str) -> ResponseSpec:
    example = {"error": error, "detail": detail, "where": "GET /v1/vaults/alice/memories/42", "hint": hint,
               "fields": []}
    return ResponseSpec(ErrorBody, description=description, generate_examples=False,
                        examples=[Example(summary=error, value=example)])


# The error responses every /v1 route documents in OpenAPI (``responses=ERROR_RESPONSES`` on each handler).
ERROR_RESPONSES = {
    400: _spec("The body is not JSON, or a cursor is not one this list issued", "BadRequest",
               "the body is not valid JSON: Expecting value (line 1, column 1)",
               "send a JSON document (UTF-8, content-type application/json) of the shape /docs shows"),
    404: _spec("No such vault, memory, session or entity", "NotFound", "no memory 42 in vault 'alice'",
               "list the vault's memories: GET /v1/vaults/{vault}/memories"),
    410: _spec("The vault was deleted (soft): it refuses use until it is purged", "Gone",
               "vault 'alice' was deleted at 2026-11-25T03:00:00+00:00",
               "purge it to erase it: DELETE /v1/vaults/NAME?purge=true"),
    413: _spec("The body, a batch or a text is larger than the configured limit", "PayloadTooLarge",
               "501 items in one request; the limit is 500", "split the batch"),
    422: _spec("The request's input is invalid (each field named)", "InvalidInput",
               "limit: Input should be less than or equal to 500", "see /docs for the request schema"),
    503: _spec("The database is unreachable for now (Retry-After says when to retry)", "DatabaseUnavailable",
               "no database connection within 10 s", "retry shortly"),
}
