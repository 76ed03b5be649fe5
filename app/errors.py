"""One exception hierarchy for the whole service.

The API maps these to HTTP in one handler (``app.api.errors``); the CLI prints ``str(exc)`` and exits 1.
Database driver errors are translated into these in one place (``app.db.connector``).
"""

from __future__ import annotations


class MemvaultError(Exception):
    """Base class. ``status`` is the HTTP status the API answers with."""

    status: int = 500
    headers: dict[str, str] | None = None  # extra HTTP response headers (WWW-Authenticate, Retry-After)
    verbatim: bool = False  # the message is a database server's own text (app.db.connector.translate)

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class ConfigError(MemvaultError):
    """Settings or environment that cannot work (wrong embedder for the database, missing path)."""


class ProvisionError(MemvaultError):
    """The embedded PostgreSQL could not be set up or started."""


class DatabaseError(MemvaultError):
    """A database failure that is not the caller's fault."""


class DatabaseUnavailable(DatabaseError):
    """The database cannot be reached now (a restart, a network cut, no free connection): retry shortly."""

    status = 503
    headers = {"Retry-After": "2"}  # a pause, not a fault: when to come back


class MissingExtension(DatabaseError):
    """The server lacks ``vector`` or ``age``."""


class Unauthorized(MemvaultError):
    """No API key, or one that is malformed, unknown, wrong or revoked."""

    status = 401
    # Bearer for API clients; Basic (any user name, the key as password) lets a browser ask for it (/inspect).
    headers = {"WWW-Authenticate": 'Bearer realm="memvault", Basic realm="memvault"'}


class BadRequest(MemvaultError):
    """A request the API cannot read at all: a body that is not JSON (or not the JSON a route takes), a cursor
    this list never issued."""

    status = 400


class TooManyRequests(MemvaultError):
    """Too many failed attempts (wrong API keys) from one client or at one key: refused until ``retry_after``."""

    status = 429

    def __init__(self, message: str, *, retry_after: int, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.headers = {"Retry-After": str(max(1, retry_after))}


class Forbidden(MemvaultError):
    """A valid key that may not do this: a lower scope, or bound to another vault."""

    status = 403


class NotFound(MemvaultError):
    status = 404


class Conflict(MemvaultError):
    status = 409


class StaleWrite(Conflict):
    """A block a write meant to change (MERGE, SUPERSEDE) is no longer the row its decision read: the write track
    decides again (app/write/serial.py); it reaches a client only when the vault kept changing under every try."""


class Gone(MemvaultError):
    """It existed and was deleted (a soft-deleted vault)."""

    status = 410


class InvalidInput(MemvaultError):
    """Bad client input. ``fields``: each field that failed, as ``{"field": ..., "message": ...}``."""

    status = 422

    def __init__(self, message: str, *, hint: str | None = None, fields: list[dict] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.fields = fields or []


def field_problems(exc: Exception, whole: str = "arguments") -> str:
    """A pydantic ``ValidationError`` as "field: what is wrong; ..." (``whole`` names an error without a field)."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or whole}: {e['msg']}" for e in exc.errors())  # type: ignore[attr-defined]


class PayloadTooLarge(MemvaultError):
    status = 413


class ModelError(MemvaultError):
    """A model backend failed (timeout, HTTP error, unusable output). Callers degrade on it."""

    status = 502


class CircuitOpen(ModelError):
    """The circuit breaker is open: the backend is skipped without being called."""

    status = 503


# The error an HTTP status of the API stands for, on the client's side (app.client, the hook's thin client).
BY_STATUS: dict[int, type[MemvaultError]] = {
    401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 410: Gone, 413: PayloadTooLarge,
    400: InvalidInput, 422: InvalidInput, 503: DatabaseUnavailable}
