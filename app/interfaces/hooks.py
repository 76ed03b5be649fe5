"""``memvault hook EVENT``: Claude Code hooks, so a coding agent remembers across sessions without being asked.

Each hook reads the event's JSON object on stdin (``session_id``, ``transcript_path``, ``prompt``...) and is wired in
``.claude/settings.json`` (see the README). The conversation's turns go into the vault as one session per Claude
Code session:
- ``session-start`` (SessionStart: ``source`` startup, resume, clear or compact; ``cwd``): what the vault holds
  about the project in ``cwd`` (its decisions, preferences, constraints, open questions), recalled and handed to
  the model as context for the session's first prompt (``hookSpecificOutput.additionalContext``). Nothing is
  written.
- ``user-prompt-submit``: recall for the prompt first, and hand what was found to the model as additional context
  (``hookSpecificOutput.additionalContext``); then record the prompt as a user turn.
- ``stop``: record the assistant's answer (its text, from the transcript) as an assistant turn.
- ``session-end``: close the session: atomic units, a summary and a thread map (the write track's session close).

A hook never blocks the agent: it exits 0 with nothing on stdout when there is nothing to add, and a failure is a
message on stderr with exit code 1 (Claude Code shows it and goes on); only exit code 2 would block a prompt.

A hook is a new process per event: it asks the running service over HTTP (``ServiceVault`` in
``app.interfaces.hook_client``, an entry that imports the standard library only; the service at MEMVAULT_API_URL,
by default http://127.0.0.1:<port>) and loads no model itself; only when nothing answers there does it do the work in
its own process (``InProcessVault``: the embedder's load, seconds). Either way the recall is a fast-thinking one.
This module imports the standard library only (and app.errors), for the thin entry's sake.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from app.errors import InvalidInput

if TYPE_CHECKING:
    from app.services import Services
    from app.vaults import Vault

EVENTS = ("session-start", "user-prompt-submit", "stop", "session-end")
CONTEXT_HEADER = "Relevant long-term memories (memvault, vault {vault}); use them if they bear on the request:"
START_HEADER = ("Long-term memories about this project (memvault, vault {vault}): decisions, preferences and open "
                "questions from earlier sessions; use them if they bear on the work:")
# What a session start asks the vault: no prompt exists yet, so the question is about the project itself.
START_QUERY = "{project}: decisions, preferences, constraints, open questions and action items"


class HookInput(NamedTuple):  # not a dataclass: dataclasses imports inspect, ~10-20 ms of a hook's start
    session_id: str
    prompt: str | None
    transcript_path: str | None
    last_assistant_message: str | None
    source: str | None = None  # SessionStart: startup, resume, clear, compact
    cwd: str | None = None

    @classmethod
    def parse(cls, raw: str) -> HookInput:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"hook input is not JSON: {exc}", hint="Claude Code passes the event on stdin") from exc
        if not isinstance(data, dict) or not isinstance(data.get("session_id"), str) or not data["session_id"]:
            raise InvalidInput("hook input has no session_id", hint="Claude Code passes the event on stdin")
        return cls(session_id=data["session_id"], prompt=_text(data.get("prompt")),
                   transcript_path=_text(data.get("transcript_path")),
                   last_assistant_message=_text(data.get("last_assistant_message")),
                   source=_text(data.get("source")), cwd=_text(data.get("cwd")))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


class HookVault(Protocol):
    """What a hook does with its vault: recall as text (fast thinking: a prompt waits for it), record a turn, close
    a session. ``InProcessVault`` does it with the tracks in this process; ``ServiceVault``
    (app/interfaces/hook_client.py) asks the running service over HTTP (no model in the hook's process)."""

    name: str

    async def recall_text(self, query: str, token_budget: int) -> str: ...

    async def record(self, session_id: str, role: str, content: str, said_at: datetime) -> None: ...

    async def close(self, session_id: str) -> None:
        """Close the session's open segment, if it has one (the worker's idle close may have done it)."""


def hook_in_process(vault_name: str, event: str, data: HookInput, key: str, *, token_budget: int) -> str | None:
    """The hook's work in this process, when no service answers (the embedder's load: seconds); stdout carries
    only the hook's answer."""
    import asyncio
    import contextlib
    import sys

    from app.interfaces.access import open_vault_as
    from app.services import Services

    async def in_process() -> str | None:
        services = await Services.start()
        try:
            _, vault = await open_vault_as(services, key, vault_name, "write")
            return await run_hook(services, vault, event, data, token_budget=token_budget)
        finally:
            await services.close()

    with contextlib.redirect_stdout(sys.stderr):
        return asyncio.run(in_process())


async def run_hook(services: Services, vault: Vault, event: str, data: HookInput, *, token_budget: int) -> str | None:
    """What the hook prints on stdout (None: nothing), with the tracks of this process."""
    return await handle(InProcessVault(services, vault), event, data, token_budget=token_budget)


async def handle(vault: HookVault, event: str, data: HookInput, *, token_budget: int) -> str | None:
    """What the hook prints on stdout (None: nothing)."""
    now = datetime.now(UTC)
    if event == "session-start":
        project = os.path.basename(os.path.normpath(data.cwd)) if data.cwd else "this project"
        context = await _recall_context(vault, START_QUERY.format(project=project or "this project"),
                                        token_budget, header=START_HEADER)
        if context is None:
            return None
        return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}},
                          ensure_ascii=False)
    if event == "user-prompt-submit":
        if data.prompt is None:
            return None
        context = await _recall_context(vault, data.prompt, token_budget)
        await vault.record(data.session_id, "user", data.prompt, now)
        if context is None:
            return None
        return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}},
                          ensure_ascii=False)
    if event == "stop":
        answer = data.last_assistant_message or (last_answer(data.transcript_path)
                                                  if data.transcript_path else None)
        if answer:
            await vault.record(data.session_id, "assistant", answer, now)
        return None
    if event == "session-end":
        await vault.close(data.session_id)
        return None
    raise InvalidInput(f"unknown hook event {event!r}", hint="one of " + ", ".join(EVENTS))


async def _recall_context(vault: HookVault, prompt: str, token_budget: int, *,
                          header: str = CONTEXT_HEADER) -> str | None:
    text = await vault.recall_text(prompt, token_budget)
    return f"{header.format(vault=vault.name)}\n{text}" if text else None


class InProcessVault:
    def __init__(self, services: Services, vault: Vault) -> None:
        self.services = services
        self.vault = vault
        self.name = vault.name

    async def recall_text(self, query: str, token_budget: int) -> str:
        from app.read.config import RecallOptions
        from app.read.recall import recall

        options = RecallOptions(format="text", token_budget=token_budget, thinking="fast")
        result = await recall(self.services, self.vault, query, options)
        return result.render()["text"]

    async def record(self, session_id: str, role: str, content: str, said_at: datetime) -> None:
        from app.write.sessions import TurnIn

        await self.services.sessions.append_turns(self.vault, session_id, [TurnIn(role, content, said_at)])

    async def close(self, session_id: str) -> None:
        await self.services.sessions.close_pending(self.vault, session_id)


def last_answer(transcript: str | os.PathLike[str]) -> str | None:
    """The text of the assistant's last answer in a Claude Code transcript (JSON lines): the assistant's text
    blocks after the last prompt the user typed (tool results do not count as prompts). None when there is none
    or the file cannot be read."""
    try:
        with open(transcript, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    texts: list[str] = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            continue
        said = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and _text(b.get("text"))]
        if entry.get("type") == "user" and said:
            texts = []  # a new prompt: what came before answered an earlier one
        elif entry.get("type") == "assistant":
            texts += said
    return "\n\n".join(texts) or None
