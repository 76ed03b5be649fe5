"""The agent-facing interfaces: the Claude Code hooks and the inspector page (MCP: test_mcp.py),
over the real write and read tracks and a clone of the migrated template."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest

from app.interfaces.hooks import HookInput, last_answer, run_hook
from app.auth import Principal
from app.interfaces.mcp import MemvaultTools

ADMIN = Principal(key_id="tests", scope="admin", vault_id=None, vault_name=None)  # what authenticate() returns


async def _turns(services, vault) -> list[tuple[str, str, str]]:
    rows = await services.db.fetchall("SELECT session_id, role, content FROM memvault.turn WHERE vault_id = %s "
                                      "ORDER BY seq", (vault.id,), vault_id=vault.id)
    return [(r["session_id"], r["role"], r["content"]) for r in rows]


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
    await MemvaultTools(services, vault.name, ADMIN).call("remember", {"content": "The staging database runs on port 6543."})
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


async def test_hook_command_reads_stdin_and_answers_on_stdout(memvault_env, monkeypatch, capsys) -> None:
    from app.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"session_id": "cc-3", "prompt": "hi"})))
    assert await asyncio.to_thread(main, ["hook", "user-prompt-submit", "--vault", "coding"]) == 0
    assert capsys.readouterr().out == ""  # an empty new vault: nothing to add, and nothing else on stdout
    monkeypatch.setattr(sys, "stdin", io.StringIO("not json"))
    assert await asyncio.to_thread(main, ["hook", "stop", "--vault", "coding"]) == 1  # never 2: that blocks
    assert "hook input is not JSON" in capsys.readouterr().err


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code"


def _payload(name: str, **override) -> str:
    """A hook's stdin as Claude Code sends it (recorded shape: tests/fixtures/claude_code/)."""
    return json.dumps({**json.loads((FIXTURES / f"{name}.json").read_text()), **override})


async def test_recorded_payloads_through_the_hook_command(services, memvault_env, tmp_path, monkeypatch,
                                                          capsys) -> None:
    """A whole Claude Code session through ``memvault hook``: session-start hands the project's memories over,
    user-prompt-submit recalls and records the prompt, stop records the answer, session-end closes."""
    from app.cli import main
    from app.vaults import create_vault

    coding = await create_vault(services.db, "coding")
    tools = MemvaultTools(services, "coding", ADMIN)
    await tools.call("remember", {"content": "billing-api: we decided to keep invoices in UTC, never local time."})
    await tools.call("remember", {"content": "The staging database of billing-api runs on port 6543."})

    async def hook(event: str, stdin: str) -> str:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        assert await asyncio.to_thread(main, ["hook", event, "--vault", "coding"]) == 0
        return capsys.readouterr().out

    start = json.loads(await hook("session-start", _payload("session_start")))["hookSpecificOutput"]
    assert start["hookEventName"] == "SessionStart"
    assert start["additionalContext"].startswith("Long-term memories about this project (memvault, vault coding)")
    assert "UTC" in start["additionalContext"]
    assert await _turns(services, coding) == []  # a session start writes nothing

    prompt = json.loads(await hook("user-prompt-submit", _payload("user_prompt_submit")))["hookSpecificOutput"]
    assert prompt["hookEventName"] == "UserPromptSubmit" and "6543" in prompt["additionalContext"]
    session = json.loads(_payload("stop"))["session_id"]
    assert await hook("stop", _payload("stop", transcript_path=str(_transcript(tmp_path)))) == ""
    assert await hook("session-end", _payload("session_end")) == ""
    assert [t[1] for t in await _turns(services, coding)] == ["user", "assistant"]
    row = await services.db.fetchone("SELECT closed_at FROM memvault.session WHERE vault_id = %s AND id = %s",
                                     (coding.id, session), vault_id=coding.id)
    assert row["closed_at"] is not None


# --- the inspector page -------------------------------------------------------------------------------------------

async def _seed(client) -> None:
    await client.post("/v1/vaults", json={"name": "insp"})
    r = await client.post("/v1/vaults/insp/sessions/s1/turns", json={"turns": [
        {"role": "user", "content": "My dentist is Dr. Lin <b>in Tainan</b>; I see her every March."},
        {"role": "assistant", "content": "Dental checkups are usually recommended every six to twelve months."}]})
    assert r.status_code == 200


async def test_inspector_lists_vaults_and_shows_a_recall_with_its_stages(client) -> None:
    await _seed(client)
    index = await client.get("/inspect")
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in index.headers["content-security-policy"]  # no script can run
    assert "<a href='/inspect/insp'>insp</a>" in index.text and "embedder use:" in index.text

    page = await client.get("/inspect/insp")
    assert "2 memories (0 superseded, 0 retracted) · 1 session (1 open) · 2 turns" in page.text
    assert "Newest memories, by when said" in page.text
    # memories are untrusted text: escaped, never markup
    assert "&lt;b&gt;in Tainan&lt;/b&gt;" in page.text and "<b>in Tainan</b>" not in page.text

    found = await client.get("/inspect/insp", params={"q": "Who is my dentist?", "thinking": "slow"})
    assert found.status_code == 200
    text = found.text
    assert "thinking slow" in text and ">search</td>" in text and ">cascade</td>" in text
    assert "<h3>Cards</h3>" in text and "Dr. Lin" in text and "SemanticBoost" in text
    # an inspector recall is no access to the memories it shows
    assert "<td data-label='accesses' class='n'>0</td></tr></table></div>" in (await client.get("/inspect/insp")).text
    # each card with both its times
    assert "data-label='when said'><time" in text and "data-label='when recorded'><time" in text


async def test_inspector_newest_memories_by_when_said_with_both_times(client) -> None:
    """An import records today what was said years ago: it is not the newest memory, and both times show."""
    import re

    await client.post("/v1/vaults", json={"name": "insp"})
    for content, said in (("I moved to Lisbon.", "2025-02-01T10:00:00Z"),
                          ("I grew up in Porto.", "2009-07-14T08:30:00Z"),
                          ("I studied in Coimbra.", "2015-09-01T09:15:30.5+01:00")):
        r = await client.post("/v1/vaults/insp/memories", json={"content": content, "said_at": said})
        assert r.status_code == 200, r.text
    page = (await client.get("/inspect/insp")).text
    newest = page[page.index("Newest memories"):]
    assert newest.index("Lisbon") < newest.index("Coimbra") < newest.index("Porto")  # by when said, not by id
    said = re.findall(r"data-label='when said'><time datetime='[^']+' title='[^']+'>([^<]+) <small>([^<]+)</small>",
                      newest)
    assert [t for t, _ in said] == ["2025-02-01 10:00", "2015-09-01 08:15", "2009-07-14 08:30"]  # UTC, to the minute
    assert all(rel.endswith(" ago") for _, rel in said)
    assert len(re.findall(r"data-label='when recorded'><time", newest)) == 3
    assert "3 memories" in page and "0 sessions" in page


async def test_inspector_memory_page_and_errors(client) -> None:
    await _seed(client)
    mem = (await client.post("/v1/vaults/insp/memories", json={"content": "The gate code is 4711."})).json()
    block_id = mem["results"][0]["block_id"]
    page = await client.get(f"/inspect/insp/memories/{block_id}")
    assert page.status_code == 200 and "The gate code is 4711." in page.text
    assert "<td data-label='decision'>CREATE</td>" in page.text

    assert (await client.get("/inspect/nowhere")).status_code == 404
    missing = await client.get("/inspect/insp/memories/999999")
    assert missing.status_code == 404 and "no memory 999999" in missing.text
    bad_time = await client.get("/inspect/insp", params={"q": "x", "as_of": "yesterday"})
    assert bad_time.status_code == 422 and "as_of must be an ISO 8601 time" in bad_time.text
    bad_mode = await client.get("/inspect/insp", params={"q": "x", "thinking": "medium"})
    assert bad_mode.status_code == 422 and "thinking" in bad_mode.text
    assert "inspect" not in (await client.get("/schema/openapi.json")).text


async def test_inspector_sign_in_cookie_and_what_a_key_may_do(services, admin_key) -> None:
    from litestar.testing import AsyncTestClient

    from app.api.app import create_app
    from app.keys import create_key
    from app.vaults import create_vault

    await create_vault(services.db, "insp")
    await create_vault(services.db, "other")
    reader, _ = await create_key(services.db, scope="read", vault="insp")
    async with AsyncTestClient(app=create_app(services.settings, services=services)) as c:
        c.headers["accept"] = "text/html,application/xhtml+xml"  # a browser
        bare = await c.get("/inspect/insp", follow_redirects=False)
        assert bare.status_code == 303
        assert bare.headers["location"].startswith("/inspect/login?next=/inspect/insp")
        script = await c.get("/inspect/insp", headers={"accept": "application/json"})
        assert script.status_code == 401 and script.json()["error"] == "Unauthorized"  # the API's own answer
        form = await c.get("/inspect/login")
        assert form.status_code == 200 and "name='key'" in form.text and "script" not in form.text
        wrong = await c.post("/inspect/login", data={"key": "nope", "next": "/inspect/insp"})
        assert wrong.status_code == 401 and "class='err'" in wrong.text
        # the form again, on the same page: where it was going kept, the secret not sent back, nothing to sign out of
        assert "id='key'" in wrong.text and "name='next' value='/inspect/insp'" in wrong.text
        assert "nope" not in wrong.text and "sign-out" not in wrong.text and "sign-out" not in form.text
        typed = reader[:-3] + "xyz"  # a typo in the secret: the key is named by its id, the secret never shown
        typo = await c.post("/inspect/login", data={"key": typed, "next": "/inspect/insp"})
        _, key_id, secret = typed.split("_", 2)
        assert typo.status_code == 401 and f"mvk_{key_id}_…" in typo.text and secret not in typo.text
        escape = await c.post("/inspect/login", data={"key": reader, "next": "//evil.example/x"},
                              follow_redirects=False)
        assert escape.status_code == 303 and escape.headers["location"] == "/inspect"  # never an open redirect
        cookie = escape.headers["set-cookie"]
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/inspect" in cookie
        assert (await c.get("/inspect/insp")).status_code == 200  # the cookie signs every page in
        index = await c.get("/inspect")
        assert "/inspect/insp'" in index.text and "/inspect/other'" not in index.text  # a key for one vault
        other = await c.get("/inspect/other", follow_redirects=False)
        assert other.status_code == 303 and "bound%20to%20vault" in other.headers["location"]
        # a read key cannot decide a review; nor can a page of another site make the browser POST
        denied = await c.post("/inspect/insp/review/1/approve", follow_redirects=False)
        assert denied.status_code == 303 and "scope" in denied.headers["location"]
        await c.post("/inspect/logout")
        assert (await c.get("/inspect/insp", follow_redirects=False)).status_code == 303
        c.cookies.set("memvault_key", admin_key, path="/inspect")
        forged = await c.post("/inspect/insp/review/1/approve", headers={"origin": "http://evil.example"},
                              follow_redirects=False)
        assert forged.status_code == 303 and "own%20pages" in forged.headers["location"]
