"""The README is executed: its examples, in order, against ``memvault serve --local-key`` (what ``make serve``
runs) on this test's database, in one shell as a reader types them: the key, ``$AUTH`` and ``$ID`` flow from one
block to the next. Every block is accounted for (run, or its snippet parsed and started as it says) and every one
succeeds: a curl that gets an error status fails the test.

What the harness adds, and only that: ``HOME`` is a temporary directory (``~/.local/share/memvault/api_key`` is
where ``serve --local-key`` writes the key; the import examples' export files are put where they name them);
``localhost:8420`` is the test's port; between blocks it waits for the worker's due jobs (the graph build), as a
reader's pace does; ``/path/to/memvault/.venv/bin/memvault`` is this checkout's."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from app.bench.runtime import serve_process
from tests.conftest import cli_env

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
PLACEHOLDER = "/path/to/memvault/.venv/bin/memvault"
MEMVAULT = str(Path(sys.executable).with_name("memvault"))
PRELUDE = """set -euo pipefail
curl() { command curl --fail-with-body --no-progress-meter "${@//localhost:8420/$README_ADDR}"; }
"""


def readme_blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w+)\n(.*?)```", (ROOT / "README.md").read_text(),
                                                            re.S)]


class Shell:
    """One bash process fed block by block, as a terminal is: variables and exports carry over."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd)
        self.run(PRELUDE)

    def run(self, script: str, stdin_note: str = "") -> str:
        marker = f"__readme_{uuid.uuid4().hex}__"
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{script}\necho; echo {marker}\n")
        self.proc.stdin.flush()
        out: list[str] = []
        for line in self.proc.stdout:
            if line.strip() == marker:
                return "".join(out)
            out.append(line)
        raise AssertionError(f"this README block failed (exit {self.proc.wait()}):\n{script}\n--- output:\n"
                             + "".join(out))

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(10)


def settle(db_url: str, seconds: float = 60) -> None:
    """Wait for the worker's due jobs (graph build, prefetch) to finish."""
    deadline = time.monotonic() + seconds
    with psycopg.connect(db_url, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM public.procrastinate_jobs WHERE status = 'doing' OR "
                           "(status = 'todo' AND (scheduled_at IS NULL OR scheduled_at <= now()))").fetchone()[0]:
            assert time.monotonic() < deadline, "the worker did not finish its jobs"
            time.sleep(0.2)


async def start_mcp(snippet_command: list[str], env: dict[str, str]) -> str:
    """Start the MCP server as a snippet says (its command, its arguments, its environment) with the SDK's
    stdio client, as Claude Code / Claude Desktop do; one recall through it."""
    command, *args = snippet_command
    params = StdioServerParameters(command=MEMVAULT if command == PLACEHOLDER else command, args=args, env=env,
                                   cwd=str(ROOT))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            found = await session.call_tool("recall", {"query": "Where do I live now?"})
    assert not found.is_error and found.structured_content is not None, found.content
    return found.content[0].text


def _claude_mcp_add(line: str, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """``claude mcp add [--env K=V]... NAME -- COMMAND ARGS...``: the command and the environment it names."""
    words = shlex.split(_expand(line, env))
    assert words[:3] == ["claude", "mcp", "add"] and "--" in words, line
    cut = words.index("--")
    options, command = words[3:cut], words[cut + 1:]
    named = {}
    for i, word in enumerate(options):
        if word in ("--env", "-e"):
            key, _, value = options[i + 1].partition("=")
            named[key] = value
    return command, named


def _expand(text: str, env: dict[str, str]) -> str:
    return re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), ""), text)


@pytest.mark.timeout(600)
async def test_the_readme_examples_run_as_written(db_url, tmp_path) -> None:
    home = tmp_path / "home"
    (home / "Downloads" / "chatgpt-export").mkdir(parents=True)
    shutil.copy(FIXTURES / "imports" / "chatgpt_conversations.json",
                home / "Downloads" / "chatgpt-export" / "conversations.json")
    (home / "claude-export").mkdir()
    shutil.copy(FIXTURES / "imports" / "claude_conversations.json", home / "claude-export" / "conversations.json")
    env = {**cli_env(db_url), "HOME": str(home),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}
    env.pop("MEMVAULT_DATA_DIR", None)
    blocks = readme_blocks()
    handled: set[int] = set()

    with serve_process(env, tmp_path / "serve.log", "--local-key") as (server, base):
        deadline = time.monotonic() + 120
        while True:  # `make serve` prints the address when it is up; a reader starts typing then
            assert server.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "memvault serve did not come up"
            try:
                if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        key_file = home / ".local" / "share" / "memvault" / "api_key"
        assert key_file.exists() and key_file.stat().st_mode & 0o777 == 0o600
        key = key_file.read_text().strip()
        env |= {"README_ADDR": base.removeprefix("http://"), "MEMVAULT_API_URL": base}
        shell = Shell(env, home)
        try:
            for i, (lang, body) in enumerate(blocks):
                first = body.strip().splitlines()[0]
                if lang == "bash" and first.startswith("make serve"):
                    handled.add(i)  # what this test stands in for: `memvault serve --local-key` above
                elif lang == "bash" and first.startswith("claude mcp add"):
                    command, named = _claude_mcp_add(first, {**env, "MEMVAULT_API_KEY": key})
                    assert named == {"MEMVAULT_API_KEY": key}  # the snippet hands the key to the server
                    server_env = {k: v for k, v in env.items() if k != "MEMVAULT_API_KEY"} | named
                    await start_mcp(command, server_env)  # vault "me" is empty until the import below
                    desktop = json.loads(" ".join(line.lstrip("# ").split("json:", 1)[-1] for line in
                                                  body.splitlines()[2:] if line.startswith("#")))
                    [entry] = desktop["mcpServers"].values()
                    assert entry["env"] == {"MEMVAULT_API_KEY": "mvk_..."}  # the key is in the config itself
                    bare = {k: v for k, v in env.items() if k != "MEMVAULT_API_KEY"}  # Desktop: no shell env
                    await start_mcp([entry["command"], *entry["args"]], bare | {"MEMVAULT_API_KEY": key})
                    handled.add(i)
                elif lang == "json" and '"hooks"' in body:
                    payload = (FIXTURES / "claude_code" / "user_prompt_submit.json").read_text()
                    for event in json.loads(body)["hooks"].values():
                        for hook in (h for group in event for h in group["hooks"]):
                            words = shlex.split(hook["command"].replace(PLACEHOLDER, MEMVAULT))
                            r = subprocess.run(words, input=payload, capture_output=True, text=True, timeout=120,
                                               env={**env, "MEMVAULT_API_KEY": key}, cwd=home)
                            assert r.returncode == 0 and r.stderr == "", r.stderr
                            if r.stdout:
                                assert json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
                    handled.add(i)
                elif lang == "bash" and first.startswith("export MEMVAULT_DATABASE_URL="):
                    # an external server: the block as written, against a second database of the test's server
                    # (which it creates), in a subshell so the export does not outlive it
                    second = f"mv_readme_ext_{os.getpid()}_{uuid.uuid4().hex[:6]}"
                    url = db_url.rsplit("/", 1)[0] + f"/{second}"
                    try:
                        out = shell.run("(\n" + body.replace(first, f"export MEMVAULT_DATABASE_URL={url}") + ")")
                        assert f"created the database {second}" in out, out
                    finally:
                        with psycopg.connect(db_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
                            conn.execute(f'DROP DATABASE IF EXISTS "{second}" WITH (FORCE)')
                    handled.add(i)
                elif lang == "bash" and first.startswith("memvault db psql"):
                    [(sql_lang, sql)] = blocks[i + 1:i + 2]
                    assert sql_lang == "sql"
                    r = subprocess.run([MEMVAULT, "db", "psql", "-v", "ON_ERROR_STOP=1"], input=sql,
                                       capture_output=True, text=True, timeout=120, env=env, cwd=home)
                    assert r.returncode == 0, r.stdout + r.stderr  # the SQL typed into it, stopping at an error
                    handled |= {i, i + 1}
                elif lang == "bash":
                    shell.run(body)
                    settle(db_url)
                    handled.add(i)
        finally:
            shell.close()
    assert handled == set(range(len(blocks))), [blocks[i][1][:60] for i in set(range(len(blocks))) - handled]
