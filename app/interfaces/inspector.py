"""The inspector page, ``/inspect``: what a vault holds and why recall returns what it returns, in a browser.

Server-rendered, no script (the page sends a Content-Security-Policy that forbids any; the entity graph is inline
SVG drawn on the server, ``app.interfaces.graph_svg``); the shell, tables, times and counts come from
``app.interfaces.inspector_html``. Memories are untrusted text, so everything shown is HTML-escaped. A person signs
in with an API key once (``app.interfaces.inspector_auth``); every page checks that key's vault and scope.
Read-only except the review queue's approve / reject and the discovery inbox's dismiss
(``app.interfaces.inspector_review``).
- ``/inspect``: the vaults, with their memories, sessions, turns and graph size, and the models in use.
- ``/inspect/{vault}``: a recall form (query, thinking mode, valid time, transaction time); its answer shows the
  intent and mode, each stage's milliseconds, the events (attention gate, breaker, speaker, cohesion...), the token
  use, and every card with its score and the multiplier of each scoring stage. Without a query, the newest
  memories by when they were said. Wherever memories are listed, both times show: when said (valid time) and when
  recorded (transaction time). An inspector recall is a real recall (it is in ``recall_log``), but it counts as no
  access to the memories it shows (no write-back) and skips the prefetch cache.
  A search form lists memories by text, category and state (``GET .../memories``'s filters), a page at a time.
- ``/inspect/{vault}/memories/{id}``: one memory: its fields, its history in both times (each version's valid time
  and the transaction time it was believed in), every place it was said, and the entity graph around it.
- ``/inspect/{vault}/entities/{id}``: an entity's relations two hops out, as a picture and a table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Controller, Response, get
from pydantic import ValidationError

from app.auth import Principal
from app.db.queries import Q
from app.errors import Forbidden, InvalidInput, MemvaultError, Unauthorized, field_problems
from app.interfaces.inspector_auth import refused, same_origin
from app.interfaces.inspector_html import count, e, error_page, page, table, td, td_time, when
from app.read.api import RecallIn
from app.services import Services
from app.vaults import Vault, get_vault, list_vaults

# Both times of a memory, wherever one is listed: when it was said (its valid time starts then) and when the vault
# recorded it (transaction time). An import records today what was said years ago.
SAID, RECORDED = "when said", "when recorded"


def _parse_time(value: str | None, name: str) -> datetime | None:
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
            rows.append([f"<td><a href='/inspect/{e(v.name)}'>{e(v.name)}</a></td>",
                         *(td(o.get(k), num=True) for k in ("memories", "sessions", "turns", "entities", "triples")),
                         td_time(o.get("last_write_at"), empty="never"), td_time(v.created_at)])
        s = services
        models = (f"<p class='f'>embedder {e(s.embedder.name)} · second rail {e(s.rail2.name if s.rail2 else 'off')}"
                  f" · LLM {e(s.settings.llm)} · reranker {e(s.settings.reranker)}</p>")
        body = models + (table(["vault", "memories", "sessions", "turns", "entities", "triples", "last write",
                                "created"], rows) if rows else "<p>No vaults yet: POST /v1/vaults.</p>")
        return page("Vaults", body)

    @get("/{vault:str}")
    async def vault(self, vault: str, services: Services, q: str | None = None, thinking: str | None = None,
                    as_of: str | None = None, known_at: str | None = None, text: str | None = None,
                    category: str | None = None, which: str | None = None, cursor: str | None = None) -> Response:
        try:
            v = await get_vault(services.db, vault)
            o = await _overview(services, v)
            facts = (f"<p>{count(o.get('memories'), 'memory', 'memories')} ({e(o.get('superseded') or 0)} "
                     f"superseded, {e(o.get('retracted') or 0)} retracted) · {count(o.get('sessions'), 'session')} "
                     f"({e(o.get('open_sessions') or 0)} open) · {count(o.get('turns'), 'turn')} · "
                     f"{count(o.get('entities'), 'entity', 'entities')} · {count(o.get('triples'), 'triple')}</p>")
            links = (f"<p><a id='review' href='/inspect/{e(v.name)}/review'>review queue and discovery inbox</a>"
                     "</p>")
            form = _form(v.name, q, thinking, as_of, known_at) + _search_form(v.name, text, category, which)
            if q:
                body = facts + links + form + await _recall_section(services, v, q, thinking, as_of, known_at)
            elif text is not None or category or which or cursor:
                body = facts + links + form + await _search_section(services, v, text, category, which, cursor)
            else:
                body = facts + links + form + await _recent_section(services, v)
        except MemvaultError as exc:
            return error_page(exc)
        return page(f"Vault {vault}", body)

    @get("/{vault:str}/memories/{block_id:int}")
    async def memory(self, vault: str, block_id: int, services: Services) -> Response:
        from app.write.memories import get_memory

        try:
            v = await get_vault(services.db, vault)
            m = await get_memory(services, v, block_id)
        except MemvaultError as exc:
            return error_page(exc)
        times = ("valid_at", "invalid_at", "recorded_at", "retracted_at", "last_accessed_at")
        fields = ("kind", "category", "source_kind", "trust_score", "confidence", "tier", "session_id", "valid_at",
                  "invalid_at", "recorded_at", "retracted_at", "superseded_by", "version", "access_count",
                  "last_accessed_at", "ppr_score", "quarantine_tags", "source_turn_ids")
        rows = [[td(f), _memory_link(v.name, m[f]) if f == "superseded_by" and m[f] else
                 td_time(m.get(f)) if f in times else td(m.get(f))] for f in fields]
        body = [f"<p><a href='/inspect/{e(v.name)}'>back to {e(v.name)}</a></p>",
                f"<pre>{e(m['content'])}</pre>",
                f"<p id='times'>{SAID} {when(m.get('valid_at'))} · {RECORDED} {when(m.get('recorded_at'))}</p>",
                table(["field", "value"], rows)]
        if m.get("summary") or m.get("digest"):
            body.append(f"<h2>Summary and digest</h2><pre>{e(m.get('summary'))}</pre><pre>{e(m.get('digest'))}</pre>")
        body.append("<h2>History</h2><p class='f'>Valid time: when it was true (from when it was said). Transaction "
                    "time: when the vault believed this version (recorded until replaced or retracted).</p>" + table(
            ["version", "content", "valid from (said)", "valid until", "recorded", "replaced", "retracted"],
            [[td(h.get("version"), num=True), td(h.get("content")), td_time(h.get("valid_at")),
              td_time(h.get("invalid_at"), empty="still true"), td_time(h.get("recorded_at")),
              td_time(h.get("replaced_at"), empty="current"), td_time(h.get("retracted_at"))]
             for h in [{**m, "replaced_at": None}, *m["history"]]]))
        body.append(await _memory_graph(services, v, block_id))
        if m["sources"]:
            body.append("<h2>Where it was said</h2>" + table(
                ["turn", "session", "source", SAID, "decision"],
                [[td(s["turn_id"], num=True), td(s["session_id"]), td(s["source_kind"]), td_time(s["said_at"]),
                  td(s["decision"])] for s in m["sources"]]))
        return page(f"Memory {block_id} in {vault}", "".join(body))

    @get("/{vault:str}/entities/{entity:str}")
    async def entity(self, vault: str, entity: str, services: Services) -> Response:
        from app.api.browse import find_entity
        from app.interfaces.graph_svg import graph_svg

        try:
            v = await get_vault(services.db, vault)
            ent = await find_entity(services, v, entity)
            rows = await services.db.fetchall(Q.entity_two_hops, (ent["id"],), vault_id=v.id)
        except MemvaultError as exc:
            return error_page(exc)
        body = [f"<p><a href='/inspect/{e(v.name)}'>back to {e(v.name)}</a> · "
                f"<span id='mentions'>named in {count(ent['mention_count'], 'memory', 'memories')}</span></p>",
                graph_svg(rows, {ent["id"]}, lambda n: f"/inspect/{v.name}/entities/{n}") if rows else
                "<p>No relations.</p>"]
        if rows:
            body.append(table(["hop", "subject", "relation", "object", "valid from", "until", "said in"], [
                [td(r["hop"], num=True), td(r["subject"]), td(r["predicate"]), td(r["object"]),
                 td_time(r["valid_at"]), td_time(r["invalid_at"], empty="still true"),
                 _memory_link(v.name, r["evidence_block_id"]) if r["evidence_block_id"] else td(None)]
                for r in rows]))
        return page(f"Entity {ent['name']}", "".join(body))


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
    return (f"<form id='search' method='get' action='/inspect/{e(vault)}'><input name='text' size='40' "
            f"placeholder='search memories...' value='{e(text)}'> <select name='category'>{cats}</select> "
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
    rows = table(["id", "memory", "category", "state", SAID, RECORDED, "feedback"], [
        [_memory_link(vault.name, m.id), td(m.content), td(m.category),
         td("retracted" if m.retracted_at else "superseded" if m.superseded_by else "current"), td_time(m.valid_at),
         td_time(m.recorded_at), td(f"+{m.feedback_up} / -{m.feedback_down}")] for m in found.items])
    more = ""
    if found.next_cursor:
        query = urlencode({"text": text or "", "category": category or "", "which": which or "current",
                           "cursor": found.next_cursor})
        more = f"<p><a id='next-page' href='/inspect/{e(vault.name)}?{e(query)}'>next page</a></p>"
    return f"<h2>Search</h2>{rows}{more}"


def _memory_link(vault: str, block_id: Any) -> str:
    return f"<td><a href='/inspect/{e(vault)}/memories/{e(block_id)}'>{e(block_id)}</a></td>"


def _form(vault: str, q: str | None, thinking: str | None, as_of: str | None, known_at: str | None) -> str:
    options = "".join(f"<option value='{m}'{' selected' if (thinking or '') == m else ''}>{m or 'by intent'}</option>"
                      for m in ("", "fast", "slow"))
    return (f"<form method='get' action='/inspect/{e(vault)}'><input name='q' size='60' placeholder='recall...' "
            f"value='{e(q)}'> <label>thinking <select name='thinking'>{options}</select></label> <label>as of "
            f"<input name='as_of' size='22' value='{e(as_of)}'></label> <label>known at <input name='known_at' "
            f"size='22' value='{e(known_at)}'></label> <button>Recall</button></form>")


async def _recall_section(services: Services, vault: Vault, q: str, thinking: str | None, as_of: str | None,
                          known_at: str | None) -> str:
    from app.read.config import RecallOptions
    from app.read.recall import recall

    try:
        args = RecallIn(query=q, thinking=thinking or None, as_of=_parse_time(as_of, "as_of"),
                        known_at=_parse_time(known_at, "known_at"))
    except ValidationError as exc:
        raise InvalidInput(field_problems(exc)) from exc
    result = await recall(services, vault, args.query, RecallOptions(
        format="cards", as_of=args.as_of, known_at=args.known_at, thinking=args.thinking, writeback=False,
        use_prefetch=False))
    meta = result.meta
    tokens = meta.get("tokens") or {}
    out = [f"<h2>Recall</h2><p>intent <b>{e(meta.get('intent'))}</b> ({e(meta.get('intent_confidence'))}) · "
           f"mode {e(meta.get('mode'))} · thinking {e(meta.get('thinking'))} · "
           f"{count(meta.get('candidates'), 'candidate')} · tokens {e(tokens.get('used'))} of "
           f"{e(tokens.get('budget'))} · {e(meta.get('total_ms'))} ms</p>"]
    out.append(table(["stage", "ms"], [[td(k), td(v, num=True)] for k, v in (meta.get("stage_ms") or {}).items()]))
    if meta.get("events"):
        out.append("<h3>Events</h3>" + table(["stage", "detail"], [
            [td(ev.get("stage")), td(", ".join(f"{k}={v}" for k, v in ev.items() if k != "stage"))]
            for ev in meta["events"]]))
    ids = [c.id for c in (*result.cards, *result.cascade_cards) if c.id > 0]
    recorded = {r["id"]: r["recorded_at"] for r in await services.db.fetchall(
        Q.block_times, {"ids": ids}, vault_id=vault.id)} if ids else {}
    for title, cards in (("Cards", result.cards), ("Cascade cards", result.cascade_cards)):
        if not cards:
            continue
        rows = [[td(i, num=True), _memory_link(vault.name, c.id) if c.id > 0 else td(c.id), td(c.score, num=True),
                 f"<td>{e(c.text)}<div class='f'>{e(_factors(c.stages))}</div></td>", td_time(c.valid_at),
                 td_time(recorded.get(c.id)), td(c.origin), td(c.session_id)] for i, c in enumerate(cards, 1)]
        out.append(f"<h3>{title}</h3>" + table(["#", "id", "score", "text · stage multipliers", SAID, RECORDED,
                                                "origin", "session"], rows))
    if not result.cards and not result.cascade_cards:
        out.append("<p>Nothing recalled.</p>")
    return "".join(out)


def _factors(stages: dict[str, float]) -> str:
    return " · ".join(f"{k} {v:g}" for k, v in stages.items() if v != 1.0) or "no stage moved it"


async def _recent_section(services: Services, vault: Vault) -> str:
    rows = await services.db.fetchall(Q.recent_blocks, (50,), vault_id=vault.id)
    if not rows:
        return "<p>No memories yet.</p>"
    return ("<h2 id='newest'>Newest memories, by when said</h2><p class='f'>When said: when the conversation it "
            "came from took place (its valid time starts then). When recorded: when the vault stored it; an import "
            "records today what was said long ago.</p>" + table(
                ["id", "memory", "kind", "source", "session", SAID, RECORDED, "accesses"],
                [[_memory_link(vault.name, r["id"]), td(r["content"]), td(r["kind"]), td(r["source_kind"]),
                  td(r["session_id"]), td_time(r["valid_at"]), td_time(r["recorded_at"]),
                  td(r["access_count"], num=True)] for r in rows]))
