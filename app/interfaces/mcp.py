"""``memvault mcp``: a Model Context Protocol server on the official SDK (the ``mcp`` package's low-level
``Server``), so an agent (Claude Desktop, Claude Code, any MCP client) can remember and recall through the same
write and read tracks the REST API serves.

Transports: stdio (``memvault mcp``; stdout carries the protocol only, logs go to stderr) and streamable HTTP
(``memvault mcp --http``, on loopback). The SDK does the protocol: framing, version negotiation, sessions,
JSON-RPC errors. This module only declares the tools and runs them.

Tools, each validated by the REST API's own Pydantic model (plus ``vault``, which defaults to the server's
``--vault``); the low-level server is used rather than ``MCPServer``'s decorators so the input schema *is* the
REST model's JSON schema, not one inferred again from a Python signature:
- ``recall``: the read track's one entry point (``RecallIn``), text format by default.
- ``remember``: one memory through the write track (``MemoryIn``); the answer names the decision and why.
- ``append_turns``: conversation turns of a session (``TurnsIn``), archived and written as memories.
- ``forget``: retract a memory (it stops being recalled; its record and history stay).
- ``feedback``: '+' or '-' on a memory (``FeedbackIn``), which recall's FeedbackBoost and pruning read.

Resources (read-only context a client may attach without a tool call):
- ``memvault://vaults/{vault}/profile``: the vault's interest profile, as ``GET /v1/vaults/{vault}/profile``
  answers it (the 7 / 30 / 90-day windows of intents and entities, and the last 7 daily snapshots), JSON. Listed
  for the server's ``--vault``; any vault the key may read through the template.

A tool that fails on its input (a missing vault, an empty query, a field out of range) answers with ``isError``
and a message that says what to fix, which the model can act on. An unknown tool is the SDK's protocol error, and
so is a resource that cannot be read (an unknown URI or vault, a key that may not read it), with the same message.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, unquote

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from app.errors import DatabaseUnavailable, InvalidInput, MemvaultError, field_problems
from app.read.schemas import RecallIn
from app.write.schemas import FeedbackIn, MemoryIn, TurnsIn

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp

    from app.auth import Principal
    from app.services import Services
    from app.vaults import Vault

log = logging.getLogger(__name__)
VAULT = Field(default=None, description="Vault name; default: the server's --vault.")


class RecallArgs(RecallIn):
    vault: str | None = VAULT
    format: SkipJsonSchema[Literal["text"]] = "text"  # not the tool's to choose: it answers in text and structured


class RememberArgs(MemoryIn):
    vault: str | None = VAULT


class AppendTurnsArgs(TurnsIn):
    vault: str | None = VAULT
    session_id: str = Field(min_length=1, max_length=200, description="The conversation these turns belong to.")


class ForgetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vault: str | None = VAULT
    memory_id: int = Field(ge=1, description="The memory's id (recall's cards and remember's answer carry it).")


class FeedbackArgs(FeedbackIn):
    vault: str | None = VAULT
    memory_id: int = Field(ge=1, description="The memory's id (recall's cards carry it).")


# What each tool answers as structured content (its outputSchema); the text content says the same for a model
# that reads text, memory ids included.
class RecalledMemory(BaseModel):
    id: int = Field(description="The memory's id: what forget and feedback take as memory_id.")
    text: str
    category: str | None = None
    valid_at: str | None = Field(default=None, description="When it became true (ISO 8601).")
    score: float
    session_id: str | None = None


class RecallResult(BaseModel):
    memories: list[RecalledMemory] = Field(description="The memories that bear on the query, best first.")
    related: list[RecalledMemory] = Field(description="Memories reached through the knowledge graph.")
    recall_id: int | None = None
    intent: str | None = None
    tokens_used: int | None = Field(default=None, description="cl100k tokens of the memories, within token_budget.")


class WriteDecision(BaseModel):
    decision: Literal["CREATE", "SKIP", "MERGE", "SUPERSEDE", "REJECT"]
    memory_id: int | None = Field(description="The memory written, merged into or kept (None when rejected).")
    reasons: list[str]
    related_memory_id: int | None = None


class TurnsRecorded(BaseModel):
    session_id: str
    turn_ids: list[int]
    memories: list[WriteDecision] = Field(description="What the turns' text became.")
    reopened: bool = False


class Forgotten(BaseModel):
    memory_id: int
    forgotten: bool


class FeedbackCounts(BaseModel):
    memory_id: int
    feedback_up: int
    feedback_down: int


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    args: type[BaseModel]
    result: type[BaseModel]
    description: str
    read_only: bool = False

    def listing(self) -> types.Tool:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return types.Tool(name=self.name, description=self.description, input_schema=schema,
                          output_schema=self.result.model_json_schema(),
                          annotations=types.ToolAnnotations(read_only_hint=self.read_only))


TOOLS = {t.name: t for t in (
    ToolSpec("recall", RecallArgs, RecallResult, read_only=True,
             description="Recall long-term memories relevant to a question or task: the few memories that "
                         "matter, ranked and packed within a token budget (as_of / known_at ask about the past). "
                         "Each comes with its id ([memory N]), which forget and feedback take."),
    ToolSpec("remember", RememberArgs, WriteDecision,
             description="Store one memory (a fact, decision, preference...). It is checked for injection, "
                         "deduplicated against what is known (CREATE / MERGE / SUPERSEDE / SKIP) and kept with its "
                         "history; the answer says what happened and why."),
    ToolSpec("append_turns", AppendTurnsArgs, TurnsRecorded,
             description="Record conversation turns of a session (role + content): archived as said and written "
                         "as memories, so later recalls can find them."),
    ToolSpec("forget", ForgetArgs, Forgotten,
             description="Forget a memory by id: it is no longer recalled (its record and history stay, so what "
                         "the vault believed before can still be asked with known_at)."),
    ToolSpec("feedback", FeedbackArgs, FeedbackCounts,
             description="Tell the vault whether a recalled memory helped ('+') or not ('-'); recall ranks it "
                         "accordingly and the background track prunes what keeps failing."),
)}


PROFILE_TEMPLATE = "memvault://vaults/{vault}/profile"
PROFILE_URI = re.compile(r"^memvault://vaults/([^/?#]+)/profile$")
PROFILE_DESCRIPTION = ("The vault's interest profile: what the user asked about and which entities mattered over the "
                       "last 7, 30 and 90 days, and the daily snapshots (top intents, top entities, change since "
                       "the day before).")


def profile_uri(vault: str) -> str:
    return PROFILE_TEMPLATE.format(vault=quote(vault, safe=""))


class MemvaultTools:
    """The tools over already started services, independent of any transport.

    ``principal`` is what the caller's API key may do (``app.auth.authenticate``): every tool opens its vault
    through ``_vault``, which checks the key's scope (recall reads, the others write) and vault binding; what a
    call changes is audited as the key.
    """

    def __init__(self, services: Services, default_vault: str | None, principal: Principal) -> None:
        self.services = services
        self.default_vault = default_vault
        self.principal = principal

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        spec = TOOLS.get(name)
        if spec is None:
            return _tool_error(f"unknown tool {name!r}; the tools are " + ", ".join(TOOLS))
        from app.db.connector import act_as

        act_as(self.principal.actor)
        try:
            args = spec.args.model_validate(arguments)
            text, result = await getattr(self, f"_{name}")(args)
        except ValidationError as exc:
            return _tool_error(f"invalid arguments for {name}: {field_problems(exc)}",
                               f"call {name} again with the arguments fixed (its inputSchema lists them)")
        except MemvaultError as exc:
            if exc.status >= 500 and exc.status != 503:  # ours, not the caller's: logged; the model is told
                log.error("mcp tool %s failed: %s", name, exc, exc_info=exc)
            return error_result(name, exc, self.default_vault)
        if isinstance(result, WriteDecision) and result.decision == "REJECT":  # a refusal: nothing was stored
            return _tool_error(text, "nothing was stored; if this is a genuine fact about the user, call remember "
                                     "again with it stated plainly, without instructions to the assistant")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=result.model_dump(mode="json"), is_error=False)

    async def read_resource(self, uri: str) -> str:
        """A resource's text (JSON); InvalidInput for a URI that names no resource of this server."""
        from app.background import profile

        m = PROFILE_URI.match(uri)
        if m is None:
            raise InvalidInput(f"no resource {uri!r}; the resources are {PROFILE_TEMPLATE}",
                               hint=f"e.g. {profile_uri(self.default_vault or 'my-vault')}")
        vault = await self._vault(unquote(m.group(1)), "read")
        async with self.services.db.transaction(vault.id) as conn:
            body = await profile.profile(conn)
        return json.dumps(body, ensure_ascii=False, default=str)

    async def _vault(self, name: str | None, scope: str = "write") -> Vault:
        from app.vaults import get_vault

        if not (name or self.default_vault):
            raise InvalidInput("no vault: pass 'vault' or start the server with --vault NAME")
        self.principal.require(name or self.default_vault, scope)
        return await get_vault(self.services.db, name or self.default_vault)

    async def _recall(self, a: RecallArgs) -> tuple[str, RecallResult]:
        from app.read.config import RecallOptions
        from app.read.recall import recall

        result = await recall(self.services, await self._vault(a.vault, "read"), a.query, RecallOptions(
            format="text", token_budget=a.token_budget, k=a.k, as_of=a.as_of, known_at=a.known_at,
            thinking=a.thinking, session_id=a.session_id, funnel=a.funnel))
        out = result.render()
        found = RecallResult(memories=[_recalled(c) for c in out["cards"]],
                             related=[_recalled(c) for c in out["cascade_cards"]],
                             recall_id=result.meta.get("recall_id"), intent=result.meta.get("intent"),
                             tokens_used=(result.meta.get("tokens") or {}).get("used"))
        return _recall_text(found), found

    async def _remember(self, a: RememberArgs) -> tuple[str, WriteDecision]:
        from app.write.items import WriteItem

        item = WriteItem(content=a.content, said_at=a.said_at or datetime.now(UTC), source_kind=a.source_kind,
                         category=a.category, confidence=a.confidence, session_id=a.session_id, metadata=a.metadata)
        [r] = await self.services.write.remember(await self._vault(a.vault), [item])
        decision = _decision(r.as_dict())
        return _decision_line(decision), decision

    async def _append_turns(self, a: AppendTurnsArgs) -> tuple[str, TurnsRecorded]:
        from app.write.sessions import TurnIn

        now = datetime.now(UTC)
        result = await self.services.sessions.append_turns(
            await self._vault(a.vault), a.session_id, [TurnIn(t.role, t.content, t.said_at or now) for t in a.turns])
        recorded = TurnsRecorded(session_id=result.session_id, turn_ids=list(result.turn_ids),
                                 memories=[_decision(r.as_dict()) for r in result.chunks], reopened=result.reopened)
        lines = [f"{len(result.turn_ids)} turns recorded in session {result.session_id!r}"]
        lines += [_decision_line(d) for d in recorded.memories]
        return "\n".join(lines), recorded

    async def _forget(self, a: ForgetArgs) -> tuple[str, Forgotten]:
        from app.write.memories import retract_memory

        await retract_memory(self.services, await self._vault(a.vault), a.memory_id)
        return (f"memory {a.memory_id} forgotten (no longer recalled; its history stays)",
                Forgotten(memory_id=a.memory_id, forgotten=True))

    async def _feedback(self, a: FeedbackArgs) -> tuple[str, FeedbackCounts]:
        from app.write.memories import feedback_memory

        row = await feedback_memory(self.services, await self._vault(a.vault), a.memory_id, a.value,
                                    actor=self.principal.actor,
                                    note=a.note)
        return (f"memory {a.memory_id}: feedback {row['feedback_up']} up, {row['feedback_down']} down",
                FeedbackCounts(memory_id=a.memory_id, feedback_up=row["feedback_up"],
                               feedback_down=row["feedback_down"]))


def _recalled(card: dict[str, Any]) -> RecalledMemory:
    return RecalledMemory(id=card["id"], text=card["text"], category=card.get("category"),
                          valid_at=card.get("valid_at"), score=card["score"], session_id=card.get("session_id"))


def _recall_text(found: RecallResult) -> str:
    """One line per memory, its id first: ``1. [memory 12] (Fact, 2026-03-01) text``."""
    def line(m: RecalledMemory) -> str:
        about = ", ".join(x for x in (m.category, (m.valid_at or "")[:10]) if x)
        return f"[memory {m.id}]" + (f" ({about})" if about else "") + f" {m.text}"

    if not found.memories and not found.related:
        return "(no memories found)"
    lines = [f"{i}. {line(m)}" for i, m in enumerate(found.memories, 1)]
    if found.related:
        lines += ["Related (knowledge graph):", *(f"- {line(m)}" for m in found.related)]
    return "\n".join(lines)


def _decision(r: dict[str, Any]) -> WriteDecision:
    return WriteDecision(decision=r["decision"], memory_id=r.get("block_id"), reasons=list(r.get("reasons") or ()),
                         related_memory_id=r.get("related_block_id"))


def next_step(tool: str, exc: MemvaultError, default_vault: str | None) -> str:
    """What the agent can do about ``exc``, in this server's terms (its tools and their arguments; the service's
    own hints name REST routes and CLI commands, which an agent cannot use)."""
    from app.errors import Conflict, DatabaseUnavailable, Forbidden, Gone, NotFound, Unauthorized

    if tool == "resources/read" and isinstance(exc, (NotFound, Gone, InvalidInput)):
        return f"read {profile_uri(default_vault or 'VAULT')}, or {PROFILE_TEMPLATE} with a vault that exists"
    if isinstance(exc, NotFound) and "vault" in exc.message and "memory" not in exc.message:
        return (f"pass 'vault' with the name of a vault that exists, or leave it out to use the default vault "
                f"({default_vault})" if default_vault else "pass 'vault' with the name of a vault that exists "
                "(ask the user which one)")
    if isinstance(exc, NotFound):
        return "call recall to find the memory: each result starts with its id, [memory N]"
    if isinstance(exc, Gone):
        return "that vault was deleted; ask the user which vault to use and pass it as 'vault'"
    if isinstance(exc, Unauthorized):
        return "the API key is missing or no longer valid: ask the user to configure a memvault API key for " \
               "this MCP server"
    if isinstance(exc, Forbidden):
        return "this API key may not do that: use only recall, or ask the user for a key with scope write"
    if isinstance(exc, Conflict):
        return f"nothing changed; call {tool} with different arguments only if the user asks"
    if isinstance(exc, DatabaseUnavailable):
        return f"the memory service is briefly unavailable: call {tool} again in a few seconds"
    if isinstance(exc, InvalidInput):
        return f"call {tool} again with the arguments fixed (its inputSchema lists them)"
    return "the memory service failed; go on without it and tell the user if it matters"


def _decision_line(d: WriteDecision) -> str:
    block = f" as memory {d.memory_id}" if d.memory_id is not None else ""
    why = "; ".join(d.reasons)
    return f"{d.decision}{block}" + (f": {why}" if why else "")


def _tool_error(message: str, next_step: str | None = None,
                details: dict[str, Any] | None = None) -> types.CallToolResult:
    """A tool error the model can act on: what went wrong, then what to do next (``details``: its structured
    content)."""
    text = f"{message}\nNext: {next_step}" if next_step else message
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True,
                                structured_content=details)


def error_result(tool: str, exc: MemvaultError, default_vault: str | None) -> types.CallToolResult:
    """A failed call as the model should read it. The database away (a restart, an outage) is MCP's 503: nothing
    was done, retry after the pause; its ``structuredContent`` carries the REST API's fields and the status."""
    if isinstance(exc, DatabaseUnavailable):
        retry = int((exc.headers or {}).get("Retry-After", "2"))
        return _tool_error(f"the memory database is unavailable right now (restarting or unreachable); nothing was "
                           f"done: retry this call in {retry} s. ({exc.message})", next_step(tool, exc, default_vault),
                           {"error": type(exc).__name__, "status": 503, "retry_after_s": retry,
                            "detail": exc.message, "hint": exc.hint})
    return _tool_error(exc.message, next_step(tool, exc, default_vault))


def instructions(default_vault: str | None) -> str:
    return ("Long-term memory. Call recall before answering anything that may depend on what the user said or "
            "decided before; call remember for facts, decisions and preferences worth keeping; feedback '-' on a "
            f"recalled memory that was wrong. Default vault: {default_vault or '(none: pass vault)'}.")


def build_server(tools_for: Callable[[ServerRequestContext], Awaitable[MemvaultTools]],
                 default_vault: str | None) -> Server:
    """The SDK's low-level server with memvault's tools. ``tools_for(ctx)`` gives the tools of one request (on
    HTTP, where each request may carry its own key, that is where the key is checked)."""
    from importlib.metadata import version

    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[t.listing() for t in TOOLS.values()])

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; the tools are " + ", ".join(TOOLS))
        try:
            tools = await tools_for(ctx)
        except MemvaultError as exc:  # no key, or one that is wrong or revoked; or the database is away
            return error_result(params.name, exc, default_vault)
        return await tools.call(params.name, params.arguments or {})

    async def list_resources(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
                             ) -> types.ListResourcesResult:
        listed = [types.Resource(name=f"profile of {default_vault}", uri=profile_uri(default_vault),
                                 mime_type="application/json", description=PROFILE_DESCRIPTION)] \
            if default_vault else []
        return types.ListResourcesResult(resources=listed)

    async def list_resource_templates(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
                                      ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            name="profile", uri_template=PROFILE_TEMPLATE, mime_type="application/json",
            description=PROFILE_DESCRIPTION)])

    async def read_resource(ctx: ServerRequestContext, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError

        from app.db.connector import act_as

        uri = str(params.uri)
        try:
            tools = await tools_for(ctx)
            act_as(tools.principal.actor)
            text = await tools.read_resource(uri)
        except MemvaultError as exc:  # the caller's to fix (a URI, a vault, a key): said as the REST API says it
            if exc.status >= 500:
                log.error("mcp resource %s failed: %s", uri, exc, exc_info=exc)
            raise MCPError(types.INVALID_PARAMS, f"{exc.message}; {next_step('resources/read', exc, default_vault)}"
                           ) from exc
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="application/json",
                                                                             text=text)])

    return Server("memvault", version=version("memvault"), instructions=instructions(default_vault),
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
                  on_list_resource_templates=list_resource_templates, on_read_resource=read_resource)


async def serve_stdio(ready: Awaitable[MemvaultTools], default_vault: str | None) -> None:
    """Serve one client on stdin / stdout until it closes the input. ``ready``: the tools once the services are
    started and the process's key checked; the protocol is answered before (initialize, the tool list), so a
    client starts in well under 2 s and the first tool call waits for the models and the pool instead. A start
    that failed (no key, the database down) is that call's tool error."""
    from mcp.server.stdio import stdio_server

    async def tools_for(_: ServerRequestContext) -> MemvaultTools:
        return await ready

    server = build_server(tools_for, default_vault)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(services: Services, default_vault: str | None, *, host: str = "127.0.0.1") -> ASGIApp:
    """The streamable HTTP transport as an ASGI app (``/mcp``). Its lifespan runs the SDK's session manager.
    Each tool call acts with the API key its HTTP request carries (``Authorization: Bearer`` or ``X-API-Key``),
    checked as the REST API checks it."""
    from app.api.guard import presented_key
    from app.auth import authenticate

    async def tools_for(ctx: ServerRequestContext) -> MemvaultTools:
        return MemvaultTools(services, default_vault,
                             await authenticate(services.db, presented_key(ctx.request) if ctx.request else None,
                                                services.verified_secrets))

    return _keys_required(build_server(tools_for, default_vault).streamable_http_app(host=host), services)


# JSON-RPC's range for a server's own errors; the one a client can act on is the key.
UNAUTHORIZED, FORBIDDEN, UNAVAILABLE, REFUSED = -32001, -32003, -32005, -32000


def http_error_body(exc: MemvaultError, where: str = "") -> dict[str, Any]:
    """An HTTP-level refusal as a JSON-RPC error: a code by kind, the reason and what to do in ``message``, the
    REST API's documented error fields (error, detail, where, hint, fields) and the status in ``data``."""
    from app.errors import DatabaseUnavailable, Forbidden, Unauthorized

    code = {Unauthorized: UNAUTHORIZED, Forbidden: FORBIDDEN, DatabaseUnavailable: UNAVAILABLE}.get(type(exc), REFUSED)
    step = ("send the memvault API key as 'Authorization: Bearer <key>' in the MCP client's configuration "
            "(`memvault key create --scope write` makes one)" if code == UNAUTHORIZED else exc.hint)
    return {"jsonrpc": "2.0", "id": None, "error": {
        "code": code, "message": f"{exc.message}" + (f"; {step}" if step else ""),
        "data": {"status": exc.status, "error": type(exc).__name__, "detail": exc.message, "where": where,
                 "hint": exc.hint, "fields": []}}}


def _keys_required(app: Starlette, services: Services) -> ASGIApp:
    """ASGI wrapper: an HTTP request without a valid API key is answered 401 (WWW-Authenticate) before the MCP
    session sees it; the lifespan passes through. The body is a JSON-RPC error (``http_error_body``), which the
    SDK's client hands to its caller as it is, rather than its stand-in for any HTTP error (-32603)."""
    from types import SimpleNamespace

    from starlette.datastructures import Headers
    from starlette.responses import JSONResponse

    from app.api.guard import presented_key
    from app.auth import authenticate_limited
    from app.auth_limit import forwarded_for

    async def asgi(scope, receive, send) -> None:
        if scope["type"] == "http":
            try:
                await authenticate_limited(
                    services.db, services.auth_attempts,
                    presented_key(SimpleNamespace(headers=Headers(scope=scope), scope=scope)),
                    services.client_address((scope.get("client") or (None,))[0], forwarded_for(scope)),
                    services.verified_secrets)
            except DatabaseUnavailable:
                # The key cannot be checked now. An HTTP 503 would reach the agent as the SDK's bare "Server
                # returned an error response"; the request goes on instead, and every tool call and resource read
                # checks the key again (``tools_for``) and answers the database's absence as a tool error that
                # says to retry. Without a checked key a client can only initialize and list the tools meanwhile.
                pass
            except MemvaultError as exc:
                where = f"{scope.get('method', '')} {scope.get('path', '')}"
                await JSONResponse(http_error_body(exc, where), status_code=exc.status, headers=exc.headers)(
                    scope, receive, send)
                return
        await app(scope, receive, send)

    return asgi
