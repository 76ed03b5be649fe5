"""Field types of the request models, light to import (pydantic only: the Python client imports the models).

Bodies are validated strictly (create_app's PydanticPlugin(validate_strict)): a boolean is true or false, never 0
or "yes"; a number is never a string; so a time needs a parser of its own, and a confidence a guard against
PostgreSQL ``real``'s underflow."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

# A text that is not blank: a character that neither JSON Schema's \s nor Python's str.strip() takes for a space
# (Python also strips \x1c-\x1f and \x85), so the document's pattern and the server's check agree.
NOT_BLANK = r"[^\s\x1c-\x1f\x85]"


def _iso_text(value: Any) -> Any:
    """A time in a JSON body is ISO 8601 text; a number is not taken as a Unix time (the document says
    date-time). A datetime passes (the models are also built in Python)."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"not an ISO 8601 time: {value[:40]!r}") from exc
    return value


def _real(value: float) -> float:
    """A number stored as PostgreSQL ``real``: one nearer to zero than the smallest normal ``real`` would be an
    underflow error there; it is zero."""
    return 0.0 if abs(value) < 1.1754944e-38 else value


# A request model's number stored in a ``real`` column (a confidence).
Real = Annotated[float, AfterValidator(_real)]

# A request model's time field.
IsoTime = Annotated[datetime, BeforeValidator(_iso_text)]
