"""The inspector page, ``/inspect``: what a vault holds and why recall returns what it returns, in a browser.

Read-only and server-rendered (no script: the page sends a Content-Security-Policy that forbids any). Memories are
untrusted text, so everything shown is HTML-escaped.
- ``/inspect``: the vaults, with their memories, sessions, turns and graph size, and the models in use.
- ``/inspect/{vault}``: a recall form (query, thinking mode, valid time, transaction time); its answer shows the
  intent and mode, each stage's milliseconds, the events (attention gate, breaker, speaker, cohesion...), the token
  use, and every card with its score and the multiplier of each scoring stage. Without a query, the newest
  memories. An inspector recall is a real recall (it is in ``recall_log``), but it counts as no access to the
  memories it shows (no write-back) and skips the prefetch cache.
- ``/inspect/{vault}/memories/{id}``: one memory: its fields, earlier versions and every place it was said.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from litestar import Controller, Response, get
from litestar.enums import MediaType
from pydantic import ValidationError

from app.auth import Principal
from app.errors import InvalidInput, MemvaultError, field_problems
from app.read.api import RecallIn
from app.services import Services
from app.vaults import Vault, get_vault, list_vaults

CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"
STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.2em}th,td{border-bottom:1px solid #ddd;padding:.3em .5em;
text-align:left;vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;white-space:nowrap}
.f{color:#666;font-size:12px}pre{white-space:pre-wrap;background:#f8f8f8;padding:.6em}input,select{font:inherit}
.err{color:#a00}a{color:#0645ad}"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _page(title: str, body: str, status: int = 200) -> Response:
    html = (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)} · memvault</title>"
            f"<style>{STYLE}</style></head><body><p><a href='/inspect'>memvault inspector</a></p>"
            f"<h1>{_e(title)}</h1>{body}</body></html>")
    return Response(html, media_type=MediaType.HTML, status_code=status,
                    headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"})


def _error(exc: MemvaultError) -> Response:
    return _page("Error", f"<p class='err'>{_e(exc)}</p>", exc.status if exc.status < 500 else 500)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """``rows`` hold HTML already escaped by the caller."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _td(value: Any, *, num: bool = False) -> str:
    return f"<td class='n'>{_e(value)}</td>" if num else f"<td>{_e(value)}</td>"


def _when(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(f"{name} must be an ISO 8601 time such as 2026-03-01T12:00:00+00:00, got {value!r}") from exc


async def _overview(services: Services, vault: Vault) -> dict[str, Any]:
    return await services.db.fetchone("SELECT * FROM memvault.vault_overview_v1()", vault_id=vault.id) or {}


class InspectorController(Controller):
    path = "/inspect"
    include_in_schema = False

    @get("/", opt={"cross_vault": "filter"})  # the vaults the key may see (app.api.guard)
    async def index(self, services: Services, principal: Principal) -> Response:
        rows = []
        for v in await list_vaults(services.db):
            if not principal.may_see(v.name):
                continue
            o = await _overview(services, v)
            rows.append([f"<td><a href='/inspect/{_e(v.name)}'>{_e(v.name)}</a></td>",
                         *(_td(o.get(k), num=True) for k in ("memories", "sessions", "turns", "entities", "triples")),
                         _td(o.get("last_write_at")), _td(v.created_at)])
        s = services
        models = (f"<p class='f'>embedder {_e(s.embedder.name)} · second rail {_e(s.rail2.name if s.rail2 else 'off')}"
                  f" · LLM {_e(s.settings.llm)} · reranker {_e(s.settings.reranker)}</p>")
        body = models + (_table(["vault", "memories", "sessions", "turns", "entities", "triples", "last write",
                                 "created"], rows) if rows else "<p>No vaults yet: POST /v1/vaults.</p>")
        return _page("Vaults", body)

    @get("/{vault:str}")
    async def vault(self, vault: str, services: Services, q: str | None = None, thinking: str | None = None,
                    as_of: str | None = None, known_at: str | None = None) -> Response:
        try:
            v = await get_vault(services.db, vault)
            o = await _overview(services, v)
            facts = (f"<p>{_e(o.get('memories'))} memories ({_e(o.get('superseded'))} superseded, "
                     f"{_e(o.get('retracted'))} retracted) · {_e(o.get('sessions'))} sessions "
                     f"({_e(o.get('open_sessions'))} open) · {_e(o.get('turns'))} turns · "
                     f"{_e(o.get('entities'))} entities · {_e(o.get('triples'))} triples</p>")
            form = _form(v.name, q, thinking, as_of, known_at)
            if q:
                body = facts + form + await _recall_section(services, v, q, thinking, as_of, known_at)
            else:
                body = facts + form + await _recent_section(services, v)
        except MemvaultError as exc:
            return _error(exc)
        return _page(f"Vault {vault}", body)

    @get("/{vault:str}/memories/{block_id:int}")
    async def memory(self, vault: str, block_id: int, services: Services) -> Response:
        from app.write.memories import get_memory

        try:
            v = await get_vault(services.db, vault)
            m = await get_memory(services, v, block_id)
        except MemvaultError as exc:
            return _error(exc)
        fields = ("kind", "category", "source_kind", "trust_score", "confidence", "tier", "session_id", "valid_at",
                  "invalid_at", "recorded_at", "retracted_at", "superseded_by", "version", "access_count",
                  "last_accessed_at", "ppr_score", "quarantine_tags", "source_turn_ids")
        rows = [[_td(f), _memory_link(v.name, m[f]) if f == "superseded_by" and m[f] else _td(m.get(f))]
                for f in fields]
        body = [f"<p><a href='/inspect/{_e(v.name)}'>back to {_e(v.name)}</a></p>",
                f"<pre>{_e(m['content'])}</pre>", _table(["field", "value"], rows)]
        if m.get("summary") or m.get("digest"):
            body.append(f"<h2>Summary and digest</h2><pre>{_e(m.get('summary'))}</pre><pre>{_e(m.get('digest'))}</pre>")
        if m["history"]:
            body.append("<h2>Earlier versions</h2>" + _table(
                ["version", "content", "valid at", "recorded at"],
                [[_td(h.get("version"), num=True), _td(h.get("content")), _td(h.get("valid_at")),
                  _td(h.get("recorded_at"))] for h in m["history"]]))
        if m["sources"]:
            body.append("<h2>Where it was said</h2>" + _table(
                ["turn", "session", "source", "said at", "decision"],
                [[_td(s["turn_id"], num=True), _td(s["session_id"]), _td(s["source_kind"]), _td(s["said_at"]),
                  _td(s["decision"])] for s in m["sources"]]))
        return _page(f"Memory {block_id} in {vault}", "".join(body))


def _memory_link(vault: str, block_id: Any) -> str:
    return f"<td><a href='/inspect/{_e(vault)}/memories/{_e(block_id)}'>{_e(block_id)}</a></td>"


def _form(vault: str, q: str | None, thinking: str | None, as_of: str | None, known_at: str | None) -> str:
    options = "".join(f"<option value='{m}'{' selected' if (thinking or '') == m else ''}>{m or 'by intent'}</option>"
                      for m in ("", "fast", "slow"))
    return (f"<form method='get' action='/inspect/{_e(vault)}'><input name='q' size='60' placeholder='recall...' "
            f"value='{_e(q)}'> thinking <select name='thinking'>{options}</select> as of <input name='as_of' "
            f"size='22' value='{_e(as_of)}'> known at <input name='known_at' size='22' value='{_e(known_at)}'> "
            "<button>Recall</button></form>")


async def _recall_section(services: Services, vault: Vault, q: str, thinking: str | None, as_of: str | None,
                          known_at: str | None) -> str:
    from app.read.config import RecallOptions
    from app.read.recall import recall

    try:
        args = RecallIn(query=q, thinking=thinking or None, as_of=_when(as_of, "as_of"),
                        known_at=_when(known_at, "known_at"))
    except ValidationError as exc:
        raise InvalidInput(field_problems(exc)) from exc
    result = await recall(services, vault, args.query, RecallOptions(
        format="cards", as_of=args.as_of, known_at=args.known_at, thinking=args.thinking, writeback=False,
        use_prefetch=False))
    meta = result.meta
    tokens = meta.get("tokens") or {}
    out = [f"<h2>Recall</h2><p>intent <b>{_e(meta.get('intent'))}</b> ({_e(meta.get('intent_confidence'))}) · "
           f"mode {_e(meta.get('mode'))} · thinking {_e(meta.get('thinking'))} · {_e(meta.get('candidates'))} "
           f"candidates · tokens {_e(tokens.get('used'))} of {_e(tokens.get('budget'))} · "
           f"{_e(meta.get('total_ms'))} ms</p>"]
    out.append(_table(["stage", "ms"], [[_td(k), _td(v, num=True)] for k, v in (meta.get("stage_ms") or {}).items()]))
    if meta.get("events"):
        out.append("<h3>Events</h3>" + _table(["stage", "detail"], [
            [_td(ev.get("stage")), _td(", ".join(f"{k}={v}" for k, v in ev.items() if k != "stage"))]
            for ev in meta["events"]]))
    for title, cards in (("Cards", result.cards), ("Cascade cards", result.cascade_cards)):
        if not cards:
            continue
        rows = [[_td(i, num=True), _memory_link(vault.name, c.id) if c.id > 0 else _td(c.id), _td(c.score, num=True),
                 f"<td>{_e(c.text)}<div class='f'>{_e(_factors(c.stages))}</div></td>", _td(c.origin),
                 _td(c.session_id)] for i, c in enumerate(cards, 1)]
        out.append(f"<h3>{title}</h3>" + _table(["#", "id", "score", "text · stage multipliers", "origin",
                                                  "session"], rows))
    if not result.cards and not result.cascade_cards:
        out.append("<p>Nothing recalled.</p>")
    return "".join(out)


def _factors(stages: dict[str, float]) -> str:
    return " · ".join(f"{k} {v:g}" for k, v in stages.items() if v != 1.0) or "no stage moved it"


async def _recent_section(services: Services, vault: Vault) -> str:
    rows = await services.db.fetchall("SELECT * FROM memvault.recent_blocks_v1(%s)", (50,), vault_id=vault.id)
    if not rows:
        return "<p>No memories yet.</p>"
    return "<h2>Newest memories</h2>" + _table(
        ["id", "memory", "kind", "source", "session", "recorded", "accesses"],
        [[_memory_link(vault.name, r["id"]), _td(r["content"]), _td(r["kind"]), _td(r["source_kind"]),
          _td(r["session_id"]), _td(r["recorded_at"]), _td(r["access_count"], num=True)] for r in rows])
