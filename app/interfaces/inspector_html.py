"""The inspector's page kit: the page shell, tables, times and counts, shared by its pages (``inspector``,
``inspector_auth``, ``inspector_review``).

- A page is server-rendered HTML under a Content-Security-Policy that allows no script. It fits a phone: a viewport
  line, forms and pictures that shrink or scroll in their own box, and tables whose rows become labelled cards
  below 40em, so the page itself never scrolls sideways.
- A time is shown to the minute in UTC (``2024-03-05 14:02``) with how long ago it was beside it (``3 days ago``);
  its exact value is in the element's ``datetime`` and ``title``.
- A count names its unit in the right number (``1 time``, ``2 times``).
Memories are untrusted text: everything shown goes through :func:`e` (HTML-escaped)."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any

from litestar import Response
from litestar.enums import MediaType

from app.api.errors import public_text
from app.errors import MemvaultError

CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"
STYLE = """*{box-sizing:border-box}body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:72em;
padding:0 1em;color:#222}h1{font-size:1.6em;overflow-wrap:anywhere}.tw{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.2em}th,td{border-bottom:1px solid #ddd;padding:.3em .5em;
text-align:left;vertical-align:top;overflow-wrap:break-word}th{background:#f4f4f4}
td.n{text-align:right;white-space:nowrap}.f,time small{color:#666;font-size:12px}time{white-space:nowrap}
time small{margin-left:.4em}td time small{display:block;margin:0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;padding:.6em}
input,select,button{font:inherit;max-width:100%}.err{color:#a00}a{color:#0645ad}
nav{display:flex;flex-wrap:wrap;gap:.5em;justify-content:space-between;align-items:center}nav form{margin:0}
form{margin:.4em 0;display:flex;flex-wrap:wrap;gap:.4em;align-items:center}form.inline{display:inline-flex}
label{display:inline-flex;flex-wrap:wrap;gap:.4em;align-items:center;max-width:100%}
.graphbox{overflow-x:auto;max-width:100%}svg.graph{max-width:100%;height:auto;display:block}
@media (max-width:40em){body{margin:.8em auto;padding:0 .6em}
table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
table.cards tr:first-child{display:none}table.cards tr{border-bottom:2px solid #ccc;padding:.3em 0}
table.cards td{border:0;padding:.1em .3em;text-align:left;white-space:normal}
table.cards td::before{content:attr(data-label);display:inline-block;min-width:8.8em;color:#666;font-size:12px}
td time small{display:inline;margin-left:.4em}}"""


def e(value: Any) -> str:
    return escape("" if value is None else str(value))


def page(title: str, body: str, status: int = 200, *, signed_in: bool = True) -> Response:
    """A whole page; ``signed_in`` False (the sign-in form) shows no "Sign out": there is nothing to leave."""
    out = ("<form method='post' action='/inspect/logout'><button id='sign-out'>Sign out</button></form>"
           if signed_in else "")
    foot = "<p class='f'>Times are UTC.</p>" if signed_in else ""
    html = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{e(title)} · memvault</title><style>{STYLE}</style></head><body><nav>"
            f"<a href='/inspect'>memvault inspector</a>{out}</nav><h1>{e(title)}</h1>{body}"
            f"{foot}</body></html>")
    return Response(html, media_type=MediaType.HTML, status_code=status,
                    headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"})


def table(headers: list[str], rows: list[list[str]]) -> str:
    """``rows`` hold ``<td>`` cells, HTML already escaped by the caller. Each cell is labelled with its column
    (``data-label``), which a table of more than two columns shows on a phone, where its rows become cards. A
    table wider than the page (a long word) scrolls in its own box."""
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(c.replace("<td", f"<td data-label='{e(h)}'", 1)
                                    for h, c in zip(headers, r, strict=True)) + "</tr>" for r in rows)
    cards = " class='cards'" if len(headers) > 2 else ""
    return f"<div class='tw'><table{cards}><tr>{head}</tr>{body}</table></div>"


def td(value: Any, *, num: bool = False) -> str:
    return f"<td class='n'>{e(value)}</td>" if num else f"<td>{e(value)}</td>"


def td_time(value: Any, *, empty: str = "") -> str:
    return f"<td>{when(value) if value else e(empty)}</td>"


def count(n: Any, one: str, many: str | None = None) -> str:
    """``1 memory``, ``2 memories``, ``0 times``: a number with its unit in the right number."""
    n = n or 0
    return f"{n} {one if n == 1 else (many or one + 's')}"


def when(value: datetime | str | None, *, now: datetime | None = None) -> str:
    """A time as ``<time>``: to the minute in UTC, how long ago below; the exact value in ``datetime`` and
    ``title``. Text that is not a time is shown as it is."""
    if value is None or value == "":
        return ""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return e(value)
    if not isinstance(moment, datetime):
        return e(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    rel = ago(moment, now or datetime.now(UTC))
    exact = moment.strftime("%Y-%m-%d %H:%M:%S") + (f".{moment.microsecond:06d}"[:4] if moment.microsecond else "")
    return (f"<time datetime='{e(moment.isoformat())}' title='{e(exact)} UTC, {e(rel)}'>"
            f"{moment:%Y-%m-%d %H:%M} <small>{e(rel)}</small></time>")


_UNITS = (("year", 365 * 86400), ("month", 30 * 86400), ("week", 7 * 86400), ("day", 86400), ("hour", 3600),
          ("minute", 60))


def ago(then: datetime, now: datetime) -> str:
    """``3 days ago``, ``in 2 hours``, ``just now``: the largest whole unit of the distance."""
    seconds = (now - then).total_seconds()
    distance = abs(seconds)
    if distance < 60:
        return "just now"
    for unit, size in _UNITS:
        if distance >= size:
            span = count(int(distance // size), unit)
            return f"{span} ago" if seconds > 0 else f"in {span}"
    return "just now"  # not reached: a minute is the smallest unit and distance >= 60


def error_page(exc: MemvaultError) -> Response:
    detail, hint = public_text(exc)  # never a database's own words, nor a fault's
    text = f"{detail}\n  hint: {hint}" if hint else detail
    return page("Error", f"<p class='err'>{e(text)}</p>", exc.status if exc.status < 500 else 500)
