"""Application errors to HTTP, in one handler: a status and a JSON body that says what to fix."""

from __future__ import annotations

import logging

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException

from app.errors import MemvaultError

log = logging.getLogger(__name__)


def memvault_error_handler(_: Request, exc: MemvaultError) -> Response:
    if exc.status >= 500:
        log.error("request failed: %s", exc, exc_info=exc)
    body = {"error": type(exc).__name__, "detail": exc.message}
    if exc.hint:
        body["hint"] = exc.hint
    return Response(body, status_code=exc.status, media_type=MediaType.JSON)


def validation_error_handler(_: Request, exc: ValidationException) -> Response:
    """Field errors as 422 (Litestar's default is 400), each naming the field and what is wrong."""
    return Response(
        {"error": "InvalidInput", "detail": exc.detail, "fields": exc.extra or []},
        status_code=422,
        media_type=MediaType.JSON,
    )


def http_error_handler(_: Request, exc: HTTPException) -> Response:
    return Response({"error": type(exc).__name__, "detail": exc.detail}, status_code=exc.status_code,
                    media_type=MediaType.JSON)


EXCEPTION_HANDLERS = {
    MemvaultError: memvault_error_handler,
    ValidationException: validation_error_handler,
    HTTPException: http_error_handler,
}
