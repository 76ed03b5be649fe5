"""The MCP server, driven by the official SDK's own client: over stdio against a real ``memvault mcp`` process, and
over streamable HTTP against the server's ASGI app under uvicorn on a loopback port; the real write and read
tracks on a clone of the migrated template."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from app.auth import Principal
from app.background.profile import write_snapshot
from app.db.cluster import free_port
from app.interfaces.mcp import MemvaultTools, http_app
from tests.fakes.live_server import mcp_http
from tests.conftest import cli_env

ADMIN = Principal(key_id="tests", scope="admin", vault_id=None, vault_name=None)  # what authenticate() returns

ROOT = Path(__file__).resolve().parents[2]


def _text(result) -> str:
    [block] = result.content
    assert block.type == "text"
    return block.text


@asynccontextmanager
async def http_session(services, vault_name: str | None, key: str | None):
    """The streamable HTTP app under uvicorn on a free loopback port, and an SDK client session to it that sends
    ``key`` with each request."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(http_app(services, vault_name), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "uvicorn did not start"
            await asyncio.sleep(0.02)
        async with _keyed(key) as http, \
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            yield session
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


def _keyed(key: str | None):
    """An HTTP client for the SDK that sends ``key`` (the SDK's own defaults otherwise)."""
    import httpx2

    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"} if key else {},
                              timeout=httpx2.Timeout(30, read=300))


async def test_stdio_process_remember_recall_forget(db_url, admin_key) -> None:
    """``memvault mcp`` started by the SDK's stdio client, as Claude Desktop / Claude Code start it."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "app.cli", "mcp", "--vault", "agent"],
                                   env=cli_env(db_url) | {"MEMVAULT_API_KEY": admin_key}, cwd=str(ROOT))
    errlog = open(os.devnull, "w")  # noqa: SIM115 - the server's log lines
    try:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "memvault" and "Default vault: agent" in (init.instructions or "")
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == {"recall", "remember", "append_turns", "forget", "feedback"}
            assert tools["recall"].input_schema["required"] == ["query"]
            assert tools["recall"].annotations.read_only_hint is True

            stored = await session.call_tool("remember", {"content": "The staging database runs on port 6543."})
            assert not stored.is_error and _text(stored).startswith("CREATE as memory ")
            memory_id = int(_text(stored).split()[3].rstrip(":"))
            found = await session.call_tool("recall", {"query": "Which port does the staging database use?"})
            assert "6543" in _text(found)
            helped = await session.call_tool("feedback", {"memory_id": memory_id, "signal": "+"})
            assert _text(helped) == f"memory {memory_id}: feedback 1 up, 0 down"
            gone = await session.call_tool("forget", {"memory_id": memory_id})
            assert not gone.is_error
            after = await session.call_tool("recall", {"query": "Which port does the staging database use?"})
            assert "6543" not in _text(after)
            with pytest.raises(MCPError, match="unknown tool 'forget_everything'"):
                await session.call_tool("forget_everything", {})
    finally:
        errlog.close()


async def test_http_transport_append_turns_and_recall(services, vault, admin_key) -> None:
    async with http_session(services, vault.name, admin_key) as session:
        await session.initialize()
        answer = await session.call_tool("append_turns", {"session_id": "chat-7", "turns": [
            {"role": "user", "content": "I am training for the Taipei marathon in December."},
            {"role": "assistant", "content": "Great goal! Build your long runs up gradually."}]})
        assert _text(answer).splitlines()[0] == "2 turns recorded in session 'chat-7'"
        found = await session.call_tool("recall", {"query": "Which race am I training for?"})
        best = found.structured_content["memories"][0]
        assert "marathon" in best["text"] and found.structured_content["intent"]
        assert f"[memory {best['id']}]" in _text(found).splitlines()[0]
        past = await session.call_tool("recall", {"query": "Which race?", "known_at": "2000-01-01T00:00:00Z"})
        assert _text(past) == "(no memories found)"  # bitemporal: the vault knew nothing then


async def test_tool_errors_say_what_to_fix(services, vault) -> None:
    tools = MemvaultTools(services, vault.name, ADMIN)
    missing = await tools.call("remember", {"contents": "typo in the field name"})
    assert missing.is_error
    assert "content: Field required" in _text(missing) and "contents: Extra inputs" in _text(missing)
    budget = await tools.call("recall", {"query": "x", "token_budget": 0})
    assert budget.is_error and "token_budget" in _text(budget)
    other = await tools.call("recall", {"query": "x", "vault": "no-such-vault"})
    assert other.is_error and "unknown vault 'no-such-vault'" in _text(other)
    nameless = await MemvaultTools(services, None, ADMIN).call("recall", {"query": "x"})
    assert nameless.is_error and "--vault" in _text(nameless)
    no_memory = await tools.call("forget", {"memory_id": 999999})
    assert no_memory.is_error and "no current memory 999999" in _text(no_memory)
    bad_signal = await tools.call("feedback", {"memory_id": 1, "signal": "maybe"})
    assert bad_signal.is_error and "signal" in _text(bad_signal)
    no_block = await tools.call("feedback", {"memory_id": 999999, "signal": "-"})
    assert no_block.is_error and "no memory 999999" in _text(no_block)


async def test_feedback_counts_are_audited(services, vault) -> None:
    tools = MemvaultTools(services, vault.name, ADMIN)
    stored = await tools.call("remember", {"content": "I prefer window seats on long flights."})
    memory_id = int(_text(stored).split()[3].rstrip(":"))
    await tools.call("feedback", {"memory_id": memory_id, "signal": "-", "note": "outdated"})
    last = await tools.call("feedback", {"memory_id": memory_id, "signal": "-"})
    assert _text(last).endswith("0 up, 2 down")
    rows = await services.db.fetchall(
        "SELECT actor, detail FROM memvault.audit_log WHERE vault_id = %s AND action = 'memory.feedback' "
        "ORDER BY id", (vault.id,))
    assert [(r["actor"], r["detail"]) for r in rows] == [("key:tests", {"signal": -1, "note": "outdated"}),
                                                        ("key:tests", {"signal": -1})]


async def test_http_command_serves_on_loopback(db_url, admin_key) -> None:
    """``memvault mcp --http --port 0``: the ready line names the port; the SDK's client talks to it there."""
    async with mcp_http(cli_env(db_url) | {"MEMVAULT_API_KEY": admin_key}, "web") as url:
        async with _keyed(admin_key) as http, streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            stored = await session.call_tool("remember", {"content": "Our on-call rotation changes every Monday."})
            assert _text(stored).startswith("CREATE")
            assert "Monday" in _text(await session.call_tool("recall", {"query": "When does on-call rotate?"}))


async def test_profile_resource_over_http_is_the_rest_profile(client, services, vault, admin_key) -> None:
    """The interest profile as an MCP resource: listed for the server's vault, a template for any vault, read
    through the SDK's client with the same body as GET .../profile; what cannot be read says why."""
    await client.post(f"/v1/vaults/{vault.name}/recall", json={"query": "What do I do on weekends?"})
    async with services.db.transaction(vault.id) as conn:  # today's snapshot, as the dream's orient stage writes it
        await write_snapshot(conn, datetime.now(UTC).date())
    rest = (await client.get(f"/v1/vaults/{vault.name}/profile")).json()
    async with http_session(services, vault.name, admin_key) as session:
        await session.initialize()
        [listed] = (await session.list_resources()).resources
        assert str(listed.uri) == f"memvault://vaults/{vault.name}/profile" and listed.mime_type == "application/json"
        [template] = (await session.list_resource_templates()).resource_templates
        assert template.uri_template == "memvault://vaults/{vault}/profile"
        [contents] = (await session.read_resource(listed.uri)).contents
        body = json.loads(contents.text)
        assert body == rest and body["snapshots"] and set(body["windows"]) == {"7", "30", "90"}
        with pytest.raises(MCPError, match="unknown vault 'nobody'"):
            await session.read_resource("memvault://vaults/nobody/profile")
        with pytest.raises(MCPError, match="no resource"):
            await session.read_resource(f"memvault://vaults/{vault.name}/diary")
