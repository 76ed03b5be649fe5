"""The agent-facing interfaces: the MCP server (in process and as a real ``memvault mcp`` process on stdio) and the
Claude Code hooks, over the real write and read tracks and a clone of the migrated template."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.interfaces.hooks import HookInput, last_answer, run_hook
from app.interfaces.mcp import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, McpServer, serve_stdio


def _call(msg_id: int, name: str, **arguments) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def _text(answer: dict) -> str:
    [block] = answer["result"]["content"]
    assert block["type"] == "text"
    return block["text"]


async def _turns(services, vault) -> list[tuple[str, str, str]]:
    rows = await services.db.fetchall("SELECT session_id, role, content FROM memvault.turn WHERE vault_id = %s "
                                      "ORDER BY seq", (vault.id,), vault_id=vault.id)
    return [(r["session_id"], r["role"], r["content"]) for r in rows]


# --- MCP ----------------------------------------------------------------------------------------------------------

async def test_mcp_handshake_and_tool_listing(services, vault) -> None:
    server = McpServer(services, vault.name)
    init = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                "params": {"protocolVersion": "2024-11-05", "clientInfo": {"name": "t"}}})
    assert init["result"]["protocolVersion"] == "2024-11-05"  # the client's, when we speak it
    assert init["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert init["result"]["serverInfo"]["name"] == "memvault"
    newer = await server.handle({"jsonrpc": "2.0", "id": 2, "method": "initialize",
                                 "params": {"protocolVersion": "2099-01-01"}})
    assert newer["result"]["protocolVersion"] == "2025-06-18"  # else our newest
    assert await server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert (await server.handle({"jsonrpc": "2.0", "id": 3, "method": "ping"}))["result"] == {}
    tools = {t["name"]: t for t in (await server.handle({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
             ["result"]["tools"]}
    assert set(tools) == {"recall", "remember", "append_turns"}
    recall_schema = tools["recall"]["inputSchema"]
    assert recall_schema["type"] == "object" and recall_schema["required"] == ["query"]
    assert {"vault", "as_of", "known_at", "token_budget", "thinking"} <= set(recall_schema["properties"])
    assert tools["append_turns"]["inputSchema"]["required"] == ["turns", "session_id"]


async def test_mcp_protocol_errors(services, vault) -> None:
    server = McpServer(services, vault.name)
    unknown = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "resources/list"})
    assert unknown["error"]["code"] == METHOD_NOT_FOUND and "resources/list" in unknown["error"]["message"]
    no_tool = await server.handle(_call(2, "forget_everything"))
    assert no_tool["error"]["code"] == INVALID_PARAMS and "recall, remember, append_turns" in no_tool["error"]["message"]
    bad = await server.handle({"id": 3, "method": "ping"})
    assert bad["id"] == 3 and bad["error"]["code"] == INVALID_REQUEST
    listed = await server.handle({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ["recall"]})
    assert listed["error"] == {"code": INVALID_PARAMS, "message": "params must be an object"}
    batch = await server.handle([{"jsonrpc": "2.0", "id": 4, "method": "ping"},
                                 {"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert batch == [{"jsonrpc": "2.0", "id": 4, "result": {}}]


async def test_mcp_remember_then_recall(services, vault) -> None:
    server = McpServer(services, vault.name)
    first = await server.handle(_call(1, "remember", content="My dentist is Dr. Lin; her clinic is in Tainan."))
    assert first["result"]["isError"] is False and _text(first).startswith("CREATE as memory ")
    again = await server.handle(_call(2, "remember", content="My dentist is Dr. Lin; her clinic is in Tainan."))
    assert _text(again).startswith("SKIP")  # the write track's Dedup, not a second copy
    found = await server.handle(_call(3, "recall", query="Who is my dentist?"))
    assert "Dr. Lin" in _text(found)
    cards = json.loads(_text(await server.handle(_call(4, "recall", query="Who is my dentist?", format="json"))))
    assert "Dr. Lin" in cards["cards"][0]["text"] and cards["meta"]["intent"]
    past = await server.handle(_call(5, "recall", query="Who is my dentist?", known_at="2000-01-01T00:00:00Z"))
    assert _text(past) == "(no memories found)"  # bitemporal: the vault knew nothing then


async def test_mcp_append_turns_records_a_session(services, vault) -> None:
    server = McpServer(services, vault.name)
    answer = await server.handle(_call(1, "append_turns", session_id="chat-7", turns=[
        {"role": "user", "content": "I am training for the Taipei marathon in December."},
        {"role": "assistant", "content": "Great goal! Build your long runs up gradually."}]))
    assert _text(answer).splitlines()[0] == "2 turns recorded in session 'chat-7'"
    assert [t[:2] for t in await _turns(services, vault)] == [("chat-7", "user"), ("chat-7", "assistant")]
    assert "marathon" in _text(await server.handle(_call(2, "recall", query="Which race am I training for?")))


async def test_mcp_tool_errors_say_what_to_fix(services, vault) -> None:
    server = McpServer(services, vault.name)
    missing = await server.handle(_call(1, "remember", contents="typo in the field name"))
    assert missing["result"]["isError"] is True
    assert "content: Field required" in _text(missing) and "contents: Extra inputs" in _text(missing)
    budget = await server.handle(_call(2, "recall", query="x", token_budget=0))
    assert budget["result"]["isError"] and "token_budget" in _text(budget)
    other = await server.handle(_call(3, "recall", query="x", vault="no-such-vault"))
    assert other["result"]["isError"] and "unknown vault 'no-such-vault'" in _text(other)
    nameless = await McpServer(services, None).handle(_call(4, "recall", query="x"))
    assert nameless["result"]["isError"] and "--vault" in _text(nameless)
    assert await _turns(services, vault) == []  # nothing half-written


async def test_mcp_stdio_loop_answers_line_by_line(services, vault) -> None:
    lines = [b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n', b"\n", b"{not json\n",
             b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n', b""]
    out: list[str] = []

    async def read_line() -> bytes:
        return lines.pop(0)

    await serve_stdio(McpServer(services, vault.name), read_line, out.append)
    answers = [json.loads(o) for o in out]
    assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert answers[1]["id"] is None and answers[1]["error"]["code"] == -32700
    assert len(answers) == 2  # the blank line and the notification get no answer


def _cli_env(db_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    return {**env, "MEMVAULT_DATABASE_URL": db_url, "MEMVAULT_EMBEDDER": "use", "MEMVAULT_LLM": "heuristic",
            "MEMVAULT_RERANKER": "none", "MEMVAULT_RAIL2_EMBEDDER": "none"}


def test_mcp_server_process_speaks_only_json_rpc_on_stdout(db_url) -> None:
    """``memvault mcp`` as an MCP client starts it: the vault is created, and stdout holds one JSON-RPC answer
    per request and nothing else (logs go to stderr)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _call(2, "remember", content="The staging database runs on port 6543."),
        _call(3, "recall", query="Which port does the staging database use?"),
    ]
    proc = subprocess.run([sys.executable, "-m", "app.cli", "mcp", "--vault", "agent"], env=_cli_env(db_url),
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          timeout=180, cwd=Path(__file__).resolve().parents[2], check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[0]["result"]["serverInfo"]["name"] == "memvault"
    assert "6543" in _text(answers[2])
    assert "ready (default vault agent)" in proc.stderr


# --- Claude Code hooks --------------------------------------------------------------------------------------------

def _transcript(tmp_path: Path) -> Path:
    entries = [
        {"type": "user", "message": {"role": "user", "content": "Fix the flaky login test"}},
        {"type": "assistant", "message": {"role": "assistant", "content": "An earlier answer."}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Which port is it?"}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "port = 6543"}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Staging listens on port 6543."}]}},
    ]
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\nnot json\n", encoding="utf-8")
    return path


def test_last_answer_reads_the_final_response_of_a_transcript(tmp_path) -> None:
    assert last_answer(_transcript(tmp_path)) == "Let me look.\n\nStaging listens on port 6543."
    assert last_answer(tmp_path / "missing.jsonl") is None
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}), encoding="utf-8")
    assert last_answer(empty) is None


def test_hook_input_needs_a_session() -> None:
    from app.errors import InvalidInput

    assert HookInput.parse('{"session_id": "s1", "prompt": "hello"}').prompt == "hello"
    for raw, message in (("{", "not JSON"), ('{"prompt": "x"}', "no session_id"), ("[]", "no session_id")):
        with pytest.raises(InvalidInput, match=message):
            HookInput.parse(raw)


async def test_hooks_recall_for_the_prompt_then_record_the_conversation(services, vault, tmp_path) -> None:
    server = McpServer(services, vault.name)
    await server.handle(_call(1, "remember", content="The staging database runs on port 6543."))
    data = HookInput("cc-1", "Which port does staging use?", None, None)
    out = await run_hook(services, vault, "user-prompt-submit", data, token_budget=500)
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert context["additionalContext"].startswith("Relevant long-term memories (memvault, vault test-vault)")
    assert "6543" in context["additionalContext"]
    # the prompt is recorded after the recall, so it never answers itself
    assert await _turns(services, vault) == [("cc-1", "user", "Which port does staging use?")]

    stop = HookInput("cc-1", None, str(_transcript(tmp_path)), None)
    assert await run_hook(services, vault, "stop", stop, token_budget=500) is None
    assert (await _turns(services, vault))[-1] == ("cc-1", "assistant", "Let me look.\n\nStaging listens on port 6543.")
    given = HookInput("cc-1", None, None, "Done: the test is fixed.")
    await run_hook(services, vault, "stop", given, token_budget=500)
    assert (await _turns(services, vault))[-1][2] == "Done: the test is fixed."

    await run_hook(services, vault, "session-end", HookInput("cc-1", None, None, None), token_budget=500)
    row = await services.db.fetchone("SELECT closed_at, turn_count FROM memvault.session WHERE vault_id = %s "
                                     "AND id = 'cc-1'", (vault.id,), vault_id=vault.id)
    assert row["closed_at"] is not None and row["turn_count"] == 3


async def test_hook_with_nothing_to_recall_prints_nothing(services, vault) -> None:
    out = await run_hook(services, vault, "user-prompt-submit", HookInput("cc-2", "hello there", None, None),
                         token_budget=500)
    assert out is None
    assert await _turns(services, vault) == [("cc-2", "user", "hello there")]
    assert await run_hook(services, vault, "stop", HookInput("cc-2", None, None, None), token_budget=500) is None


async def test_hook_command_reads_stdin_and_answers_on_stdout(db_url, monkeypatch, capsys) -> None:
    from app.cli import main
    from app.models.registry import clear_cache
    from app.settings import get_settings

    for key, value in _cli_env(db_url).items():
        if key.startswith("MEMVAULT_"):
            monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    clear_cache()
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"session_id": "cc-3", "prompt": "hi"})))
        assert await asyncio.to_thread(main, ["hook", "user-prompt-submit", "--vault", "coding"]) == 0
        assert capsys.readouterr().out == ""  # an empty new vault: nothing to add, and nothing else on stdout
        monkeypatch.setattr(sys, "stdin", io.StringIO("not json"))
        assert await asyncio.to_thread(main, ["hook", "stop", "--vault", "coding"]) == 1
        assert "hook input is not JSON" in capsys.readouterr().err
    finally:
        get_settings.cache_clear()


# --- the inspector page -------------------------------------------------------------------------------------------

async def _seed(client) -> None:
    await client.post("/v1/vaults", json={"name": "insp"})
    r = await client.post("/v1/vaults/insp/sessions/s1/turns", json={"turns": [
        {"role": "user", "content": "My dentist is Dr. Lin <b>in Tainan</b>; I see her every March."},
        {"role": "assistant", "content": "Noted: Dr. Lin, every March."}]})
    assert r.status_code == 200


async def test_inspector_lists_vaults_and_shows_a_recall_with_its_stages(client) -> None:
    await _seed(client)
    index = await client.get("/inspect")
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in index.headers["content-security-policy"]  # no script can run
    assert "<a href='/inspect/insp'>insp</a>" in index.text and "embedder use:" in index.text

    page = await client.get("/inspect/insp")
    assert "2 memories (0 superseded, 0 retracted) · 1 sessions (1 open) · 2 turns" in page.text
    assert "Newest memories" in page.text
    # memories are untrusted text: escaped, never markup
    assert "&lt;b&gt;in Tainan&lt;/b&gt;" in page.text and "<b>in Tainan</b>" not in page.text

    found = await client.get("/inspect/insp", params={"q": "Who is my dentist?", "thinking": "slow"})
    assert found.status_code == 200
    text = found.text
    assert "thinking slow" in text and "<td>search</td>" in text and "<td>cascade</td>" in text
    assert "<h3>Cards</h3>" in text and "Dr. Lin" in text and "SemanticBoost" in text
    # an inspector recall is no access to the memories it shows
    assert "<td class='n'>0</td></tr></table>" in (await client.get("/inspect/insp")).text


async def test_inspector_memory_page_and_errors(client) -> None:
    await _seed(client)
    mem = (await client.post("/v1/vaults/insp/memories", json={"content": "The gate code is 4711."})).json()
    block_id = mem["results"][0]["block_id"]
    page = await client.get(f"/inspect/insp/memories/{block_id}")
    assert page.status_code == 200 and "The gate code is 4711." in page.text and "<td>CREATE</td>" in page.text

    assert (await client.get("/inspect/nowhere")).status_code == 404
    missing = await client.get("/inspect/insp/memories/999999")
    assert missing.status_code == 404 and "no memory 999999" in missing.text
    bad_time = await client.get("/inspect/insp", params={"q": "x", "as_of": "yesterday"})
    assert bad_time.status_code == 422 and "as_of must be an ISO 8601 time" in bad_time.text
    bad_mode = await client.get("/inspect/insp", params={"q": "x", "thinking": "medium"})
    assert bad_mode.status_code == 422 and "thinking" in bad_mode.text
    assert "inspect" not in (await client.get("/schema/openapi.json")).text
