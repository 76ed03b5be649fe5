"""``memvault mcp``: a Model Context Protocol server on stdio, so an agent (Claude Desktop, Claude Code, any MCP
client) can remember and recall through the same write and read tracks the REST API serves.

Transport: newline-delimited JSON-RPC 2.0 on stdin / stdout (the MCP stdio transport). Everything else the
process prints goes to stderr, so a log line can never corrupt the protocol. Requests are answered one at a time.

Tools (arguments validated by the REST API's own Pydantic models, plus ``vault``, which defaults to the server's
``--vault``):
- ``recall``: ``recall(query)`` in the text format by default (json and cards too); the read track's one entry
  point, with the same budget, times and thinking override as ``POST /v1/vaults/{vault}/recall``.
- ``remember``: one memory through the write track; the answer names its decision (CREATE, MERGE, SUPERSEDE,
  SKIP, REJECT) and why.
- ``append_turns``: conversation turns of a session, archived and written as memories.

A tool that fails on its input (a missing vault, an empty query, a field out of range) answers with ``isError``
and a message that says what to fix, which the model can act on; an unknown tool or method is a JSON-RPC error.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from app.errors import InvalidInput, MemvaultError, field_problems
from app.read.api import RecallIn
from app.write.schemas import MemoryIn, TurnsIn

if TYPE_CHECKING:
    from app.services import Services

log = logging.getLogger(__name__)

# Newest first: the client's version when we speak it, else the newest.
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
VAULT = Field(default=None, description="Vault name; default: the server's --vault.")


class RecallArgs(RecallIn):
    vault: str | None = VAULT
    format: Literal["text", "json", "cards"] = "text"


class RememberArgs(MemoryIn):
    vault: str | None = VAULT


class AppendTurnsArgs(TurnsIn):
    vault: str | None = VAULT
    session_id: str = Field(min_length=1, max_length=200, description="The conversation these turns belong to.")


class Tool(BaseModel):
    name: str
    description: str
    args: type[BaseModel]

    def listing(self) -> dict[str, Any]:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return {"name": self.name, "description": self.description, "inputSchema": schema}


TOOLS = {t.name: t for t in (
    Tool(name="recall", args=RecallArgs,
         description="Recall long-term memories relevant to a question or task: the few memories that matter, "
                     "ranked and packed within a token budget (as_of / known_at ask about the past)."),
    Tool(name="remember", args=RememberArgs,
         description="Store one memory (a fact, decision, preference...). It is checked for injection, "
                     "deduplicated against what is known (CREATE / MERGE / SUPERSEDE / SKIP) and kept with its "
                     "history; the answer says what happened and why."),
    Tool(name="append_turns", args=AppendTurnsArgs,
         description="Record conversation turns of a session (role + content): archived as said and written as "
                     "memories, so later recalls can find them."),
)}


class McpServer:
    """One MCP session over already started services; ``handle`` answers one decoded JSON-RPC message."""

    def __init__(self, services: Services, default_vault: str | None) -> None:
        self.services = services
        self.default_vault = default_vault

    async def handle(self, message: Any) -> dict[str, Any] | list[dict[str, Any]] | None:
        if isinstance(message, list):  # a JSON-RPC batch (protocol 2025-03-26)
            answers = [a for m in message if (a := await self.handle(m)) is not None]
            return answers or None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return _error(message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST,
                          "not a JSON-RPC 2.0 request: an object with jsonrpc '2.0' and a method is expected")
        method, params, msg_id = message["method"], message.get("params") or {}, message.get("id")
        if "id" not in message:  # a notification (initialized, cancelled...): nothing to answer
            return None
        if not isinstance(params, dict):
            return _error(msg_id, INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            return _result(msg_id, self._initialize(params))
        if method == "ping":
            return _result(msg_id, {})
        if method == "tools/list":
            return _result(msg_id, {"tools": [t.listing() for t in TOOLS.values()]})
        if method == "tools/call":
            tool = TOOLS.get(params.get("name"))
            if tool is None:
                return _error(msg_id, INVALID_PARAMS, f"unknown tool {params.get('name')!r}; the tools are "
                                                      + ", ".join(TOOLS))
            return _result(msg_id, await self._call(tool, params.get("arguments") or {}))
        return _error(msg_id, METHOD_NOT_FOUND, f"method {method!r} is not supported (tools only)")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        from importlib.metadata import version

        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "memvault", "version": version("memvault")},
            "instructions": "Long-term memory. Call recall before answering anything that may depend on what the "
                            "user said or decided before; call remember for facts, decisions and preferences worth "
                            f"keeping. Default vault: {self.default_vault or '(none: pass vault)'}.",
        }

    async def _call(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            args = tool.args.model_validate(arguments)
            text = await getattr(self, f"_{tool.name}")(args)
        except ValidationError as exc:
            return _tool_error(f"invalid arguments for {tool.name}: {field_problems(exc)}")
        except MemvaultError as exc:  # the caller's to fix (unknown vault, bad input): say what, as the API does
            return _tool_error(str(exc))
        return {"content": [{"type": "text", "text": text}], "isError": False}

    async def _vault(self, name: str | None):
        from app.vaults import get_vault

        if not (name or self.default_vault):
            raise InvalidInput("no vault: pass 'vault' or start the server with --vault NAME")
        return await get_vault(self.services.db, name or self.default_vault)

    async def _recall(self, a: RecallArgs) -> str:
        from app.read.config import RecallOptions
        from app.read.recall import recall

        result = await recall(self.services, await self._vault(a.vault), a.query, RecallOptions(
            format=a.format, token_budget=a.token_budget, k=a.k, as_of=a.as_of, known_at=a.known_at,
            thinking=a.thinking, session_id=a.session_id, funnel=a.funnel))
        out = result.render()
        if a.format == "text":
            return out["text"] or "(no memories found)"
        return json.dumps({"cards": out["cards"], "cascade_cards": out["cascade_cards"],
                           "meta": {k: result.meta.get(k) for k in ("intent", "thinking", "tokens", "recall_id")}},
                          ensure_ascii=False, default=str)

    async def _remember(self, a: RememberArgs) -> str:
        from app.write.items import WriteItem
        from app.write.pipeline import WriteTrack

        item = WriteItem(content=a.content, said_at=a.said_at or datetime.now(UTC), source_kind=a.source_kind,
                         category=a.category, confidence=a.confidence, session_id=a.session_id, metadata=a.metadata)
        [r] = await WriteTrack(self.services).remember(await self._vault(a.vault), [item])
        return _decision_line(r.as_dict())

    async def _append_turns(self, a: AppendTurnsArgs) -> str:
        from app.write.sessions import SessionTrack, TurnIn

        now = datetime.now(UTC)
        result = await SessionTrack(self.services).append_turns(
            await self._vault(a.vault), a.session_id, [TurnIn(t.role, t.content, t.said_at or now) for t in a.turns])
        lines = [f"{len(result.turn_ids)} turns recorded in session {result.session_id!r}"]
        lines += [_decision_line(r.as_dict()) for r in result.chunks]
        return "\n".join(lines)


def _decision_line(r: dict[str, Any]) -> str:
    block = f" as memory {r['block_id']}" if r.get("block_id") is not None else ""
    why = "; ".join(r.get("reasons") or ())
    return f"{r['decision']}{block}" + (f": {why}" if why else "")


def _result(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


async def serve_stdio(server: McpServer, read_line, write_line) -> None:
    """Answer messages until the input ends. ``read_line()`` returns bytes (b'' at the end); ``write_line(str)``
    writes one message."""
    while line := await read_line():
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as exc:
            write_line(json.dumps(_error(None, PARSE_ERROR, f"not JSON: {exc}")))
            continue
        try:
            answer = await server.handle(message)
        except Exception as exc:  # noqa: BLE001 - a fault of ours: answer it, log it, keep the session
            log.exception("mcp: %s failed", message.get("method") if isinstance(message, dict) else "batch")
            msg_id = message.get("id") if isinstance(message, dict) else None
            answer = _error(msg_id, -32603, f"internal error: {type(exc).__name__}: {exc}")
        if answer is not None:
            write_line(json.dumps(answer, ensure_ascii=False, default=str))
