"""The inspector page, ``/inspect``: what a vault holds and why recall returns what it returns, in a browser.

Server-rendered, no script (the page sends a Content-Security-Policy that forbids any; the entity graph is inline
SVG drawn on the server). Memories are untrusted text, so everything shown is HTML-escaped. A person signs in with
an API key once (``app.interfaces.inspector_auth``); every page checks that key's vault and scope. Read-only except
the review queue's approve / reject and the discovery inbox's dismiss (``app.interfaces.inspector_review``).
- ``/inspect``: the vaults, with their memories, sessions, turns and graph size, and the models in use.
- ``/inspect/{vault}``: a recall form (query, thinking mode, valid time, transaction time); its answer shows the
  intent and mode, each stage's milliseconds, the events (attention gate, breaker, speaker, cohesion...), the token
  use, and every card with its score and the multiplier of each scoring stage. Without a query, the newest
  memories. An inspector recall is a real recall (it is in ``recall_log``), but it counts as no access to the
  memories it shows (no write-back) and skips the prefetch cache.
  A search form lists memories by text, category and state (``GET .../memories``'s filters), a page at a time.
- ``/inspect/{vault}/memories/{id}``: one memory: its fields, its history in both times (each version's valid time
  and the transaction time it was believed in), every place it was said, and the entity graph around it.
- ``/inspect/{vault}/entities/{id}``: an entity's relations two hops out, as a picture and a table.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from litestar import Controller, Response, get
from litestar.enums import MediaType
from pydantic import ValidationError

from app.api.errors import public_text
from app.auth import Principal
from app.db.queries import Q
from app.errors import Forbidden, InvalidInput, MemvaultError, Unauthorized, field_problems
from app.interfaces.inspector_auth import refused, same_origin
from app.read.api import RecallIn
from app.services import Services
from app.vaults import Vault, get_vault, list_vaults

CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"
STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.2em}th,td{border-bottom:1px solid #ddd;padding:.3em .5em;
text-align:left;vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;white-space:nowrap}
.f{color:#666;font-size:12px}pre{white-space:pre-wrap;background:#f8f8f8;padding:.6em}input,select{font:inherit}
.err{color:#a00}a{color:#0645ad}nav{display:flex;justify-content:space-between;align-items:center}
nav form{margin:0}form{margin:.4em 0}svg.graph{max-width:100%;height:auto}"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _page(title: str, body: str, status: int = 200) -> Response:
    html = (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)} · memvault</title>"
            f"<style>{STYLE}</style></head><body><nav><a href='/inspect'>memvault inspector</a>"
            "<form method='post' action='/inspect/logout'><button id='sign-out'>Sign out</button></form></nav>"
            f"<h1>{_e(title)}</h1>{body}</body></html>")
    return Response(html, media_type=MediaType.HTML, status_code=status,
                    headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"})


def _error(exc: MemvaultError) -> Response:
    detail, hint = public_text(exc)  # never a database's own words, nor a fault's
    text = f"{detail}\n  hint: {hint}" if hint else detail
    return _page("Error", f"<p class='err'>{_e(text)}</p>", exc.status if exc.status < 500 else 500)


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
    return await services.db.fetchone(Q.vault_overview, vault_id=vault.id) or {}


class InspectorController(Controller):
    path = "/inspect"
    include_in_schema = False
    guards = [same_origin]
    exception_handlers = {Unauthorized: refused, Forbidden: refused}  # a browser is sent to sign in

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
                    as_of: str | None = None, known_at: str | None = None, text: str | None = None,
                    category: str | None = None, which: str | None = None, cursor: str | None = None) -> Response:
        try:
            v = await get_vault(services.db, vault)
            o = await _overview(services, v)
            facts = (f"<p>{_e(o.get('memories'))} memories ({_e(o.get('superseded'))} superseded, "
                     f"{_e(o.get('retracted'))} retracted) · {_e(o.get('sessions'))} sessions "
                     f"({_e(o.get('open_sessions'))} open) · {_e(o.get('turns'))} turns · "
                     f"{_e(o.get('entities'))} entities · {_e(o.get('triples'))} triples</p>")
            links = (f"<p><a id='review' href='/inspect/{_e(v.name)}/review'>review queue and discovery inbox</a>"
                     "</p>")
            form = _form(v.name, q, thinking, as_of, known_at) + _search_form(v.name, text, category, which)
            if q:
                body = facts + links + form + await _recall_section(services, v, q, thinking, as_of, known_at)
            elif text is not None or category or which or cursor:
                body = facts + links + form + await _search_section(services, v, text, category, which, cursor)
            else:
                body = facts + links + form + await _recent_section(services, v)
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
        body.append("<h2>History</h2><p class='f'>Valid time: when it was true. Transaction time: when the vault "
                    "believed this version (recorded until replaced or retracted).</p>" + _table(
            ["version", "content", "valid from", "valid until", "recorded", "replaced", "retracted"],
            [[_td(h.get("version"), num=True), _td(h.get("content")), _td(h.get("valid_at")),
              _td(h.get("invalid_at") or "still true"), _td(h.get("recorded_at")),
              _td(h.get("replaced_at") or "current"), _td(h.get("retracted_at"))]
             for h in [{**m, "replaced_at": None}, *m["history"]]]))
        body.append(await _memory_graph(services, v, block_id))
        if m["sources"]:
            body.append("<h2>Where it was said</h2>" + _table(
                ["turn", "session", "source", "said at", "decision"],
                [[_td(s["turn_id"], num=True), _td(s["session_id"]), _td(s["source_kind"]), _td(s["said_at"]),
                  _td(s["decision"])] for s in m["sources"]]))
        return _page(f"Memory {block_id} in {vault}", "".join(body))


    @get("/{vault:str}/entities/{entity:str}")
    async def entity(self, vault: str, entity: str, services: Services) -> Response:
        from app.api.browse import find_entity
        from app.interfaces.graph_svg import graph_svg

        try:
            v = await get_vault(services.db, vault)
            e = await find_entity(services, v, entity)
            rows = await services.db.fetchall(Q.entity_two_hops,
                                              (e["id"],), vault_id=v.id)
        except MemvaultError as exc:
            return _error(exc)
        body = [f"<p><a href='/inspect/{_e(v.name)}'>back to {_e(v.name)}</a> · mentioned {_e(e['mention_count'])}"
                " times</p>",
                graph_svg(rows, {e["id"]}, lambda n: f"/inspect/{v.name}/entities/{n}") if rows else
                "<p>No relations.</p>"]
        if rows:
            body.append(_table(["hop", "subject", "relation", "object", "valid from", "until", "said in"], [
                [_td(r["hop"], num=True), _td(r["subject"]), _td(r["predicate"]), _td(r["object"]),
                 _td(r["valid_at"]), _td(r["invalid_at"]),
                 _memory_link(v.name, r["evidence_block_id"]) if r["evidence_block_id"] else _td(None)]
                for r in rows]))
        return _page(f"Entity {e['name']}", "".join(body))


async def _memory_graph(services: Services, vault: Vault, block_id: int) -> str:
    """The relations this memory is the evidence of, and one hop around each of its entities."""
    from app.interfaces.graph_svg import graph_svg

    focus = {r["entity_id"] for r in await services.db.fetchall(
        Q.block_entities, (block_id,), vault_id=vault.id)}
    if not focus:
        return "<h2>Entity graph</h2><p>No entities from this memory yet (the worker builds the graph).</p>"
    relations: dict[int, dict] = {}
    for entity_id in sorted(focus):
        for r in await services.db.fetchall(Q.entity_one_hop, (entity_id,),
                                            vault_id=vault.id):
            relations.setdefault(r["triple_id"], r)
    picture = graph_svg(relations.values(), focus, lambda n: f"/inspect/{vault.name}/entities/{n}")
    return f"<h2>Entity graph</h2><p class='f'>Click an entity for its own neighbourhood.</p>{picture}"


def _search_form(vault: str, text: str | None, category: str | None, which: str | None) -> str:
    from typing import get_args

    from app.write.schemas import Category

    cats = "".join(f"<option value='{c}'{' selected' if category == c else ''}>{c or 'any category'}</option>"
                   for c in ("", *get_args(Category)))
    states = "".join(f"<option value='{w}'{' selected' if (which or 'current') == w else ''}>{w}</option>"
                     for w in ("current", "superseded", "retracted", "all"))
    return (f"<form id='search' method='get' action='/inspect/{_e(vault)}'><input name='text' size='40' "
            f"placeholder='search memories...' value='{_e(text)}'> <select name='category'>{cats}</select> "
            f"<select name='which'>{states}</select> <button id='search-button'>Search</button></form>")


async def _search_section(services: Services, vault: Vault, text: str | None, category: str | None,
                          which: str | None, cursor: str | None) -> str:
    from urllib.parse import urlencode

    from app.api.browse import list_memories

    filters = {"contains": (text or "").strip() or None, "category": category or None,
               "state": which if which in ("current", "superseded", "retracted", "all") else "current"}
    found = await list_memories(services, vault, filters, 50, cursor)
    if not found.items:
        return "<h2>Search</h2><p>No memory matches.</p>"
    table = _table(["id", "memory", "category", "state", "valid from", "recorded", "feedback"], [
        [_memory_link(vault.name, m.id), _td(m.content), _td(m.category),
         _td("retracted" if m.retracted_at else "superseded" if m.superseded_by else "current"), _td(m.valid_at),
         _td(m.recorded_at), _td(f"+{m.feedback_up} / -{m.feedback_down}")] for m in found.items])
    more = ""
    if found.next_cursor:
        query = urlencode({"text": text or "", "category": category or "", "which": which or "current",
                           "cursor": found.next_cursor})
        more = f"<p><a id='next-page' href='/inspect/{_e(vault.name)}?{_e(query)}'>next page</a></p>"
    return f"<h2>Search</h2>{table}{more}"


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
    rows = await services.db.fetchall(Q.recent_blocks, (50,), vault_id=vault.id)
    if not rows:
        return "<p>No memories yet.</p>"
    return "<h2>Newest memories</h2>" + _table(
        ["id", "memory", "kind", "source", "session", "recorded", "accesses"],
        [[_memory_link(vault.name, r["id"]), _td(r["content"]), _td(r["kind"]), _td(r["source_kind"]),
          _td(r["session_id"]), _td(r["recorded_at"]), _td(r["access_count"], num=True)] for r in rows])
