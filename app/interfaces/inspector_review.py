"""The inspector's review page, ``/inspect/{vault}/review``: the background track's review queue (what it would not
change alone) with approve / reject buttons, and its discovery inbox (insights, knowledge gaps, surprising links)
with dismiss. The buttons are plain form POSTs (no script), which need a key with scope write; each decision is the
background track's own (``app.background.review.decide``), made and audited as the signed-in key."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.response import Redirect

from app.background import review
from app.db.queries import Q
from app.errors import Forbidden, MemvaultError, Unauthorized
from app.interfaces.inspector_auth import principal_of, refused, same_origin
from app.interfaces.inspector_html import e, error_page, page, table, td, td_time
from app.services import Services
from app.vaults import get_vault


class InspectorReviewController(Controller):
    path = "/inspect/{vault:str}"
    include_in_schema = False
    guards = [same_origin]
    exception_handlers = {Unauthorized: refused, Forbidden: refused}  # a browser is sent to sign in

    @get("/review")
    async def page(self, vault: str, services: Services, done: str | None = None) -> Response:
        try:
            v = await get_vault(services.db, vault)
            open_items = [q for q in await review.list_items(services.db, v.id, limit=100)
                          if q["status"] in ("PENDING", "CLAIMED")]
            decided = [q for q in await review.list_items(services.db, v.id, limit=20)
                       if q["status"] in ("APPROVED", "REJECTED")]
            inbox = [r["d"] for r in await services.db.fetchall(Q.discovery_list,
                                                                vault_id=v.id)]
        except MemvaultError as exc:
            return error_page(exc)
        body = [f"<p><a href='/inspect/{e(v.name)}'>back to {e(v.name)}</a></p>"]
        if done:
            body.append(f"<p id='done'>{e(done)}</p>")
        body.append("<h2>Review queue</h2>")
        body.append(table(["#", "kind", "proposal", "why", "confidence", "impact", "due", ""], [
            [td(q["id"], num=True), td(q["kind"]), td(_proposal(q["proposal"])), td(q["reason"]),
             td(q["confidence"], num=True), td(q["impact"], num=True), td_time(q["due_at"]),
             f"<td>{_button(v.name, 'review', q['id'], 'approve')} {_button(v.name, 'review', q['id'], 'reject')}"
             "</td>"] for q in open_items]) if open_items else "<p>Nothing waits for a decision.</p>")
        if decided:
            body.append("<h3>Decided</h3>" + table(["#", "kind", "proposal", "decision", "by", "when"], [
                [td(q["id"], num=True), td(q["kind"]), td(_proposal(q["proposal"])), td(q["status"]),
                 td(q.get("decided_by")), td_time(q.get("decided_at"))] for q in decided]))
        body.append("<h2>Discovery inbox</h2>")
        body.append(table(["#", "kind", "finding", "score", "found", ""], [
            [td(d["id"], num=True), td(d["kind"]), td(d["title"]), td(round(d["score"], 3), num=True),
             td_time(d["created_at"]), f"<td>{_button(v.name, 'inbox', d['id'], 'dismiss')}</td>"] for d in inbox])
            if inbox else "<p>The inbox is empty (the dream loop fills it).</p>")
        return page(f"Review · {vault}", "".join(body))

    @post("/review/{item_id:int}/approve")
    async def approve(self, vault: str, item_id: int, request: Request, services: Services) -> Response:
        return await _decide(request, services, vault, item_id, approve=True)

    @post("/review/{item_id:int}/reject")
    async def reject(self, vault: str, item_id: int, request: Request, services: Services) -> Response:
        return await _decide(request, services, vault, item_id, approve=False)

    @post("/inbox/{item_id:int}/dismiss")
    async def dismiss(self, vault: str, item_id: int, services: Services) -> Response:
        try:
            v = await get_vault(services.db, vault)
            await services.db.fetchone(Q.discovery_dismiss, (item_id,), vault_id=v.id)
        except MemvaultError as exc:
            return error_page(exc)
        return Redirect(f"/inspect/{v.name}/review?done=finding {item_id} dismissed", status_code=303)


async def _decide(request: Request, services: Services, vault: str, item_id: int, *, approve: bool) -> Response:
    try:
        v = await get_vault(services.db, vault)
        q = await review.decide(services.db, v.id, item_id, approve=approve, by=principal_of(request).actor,
                                note="inspector")
    except MemvaultError as exc:
        return error_page(exc)
    return Redirect(f"/inspect/{v.name}/review?done=item {item_id} {q.get('status', '').lower()}", status_code=303)


def _button(vault: str, area: str, item_id: int, action: str) -> str:
    return (f"<form method='post' action='/inspect/{e(vault)}/{area}/{item_id}/{action}' class='inline'>"
            f"<button id='{action}-{item_id}'>{action}</button></form>")


def _proposal(p: Any) -> str:
    if isinstance(p, dict):
        return ", ".join(f"{k}: {v}" for k, v in p.items())
    return str(p)
