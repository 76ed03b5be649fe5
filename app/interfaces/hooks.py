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
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


@dataclass(frozen=True, slots=True)
class HookInput:
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


async def run_hook(services: Services, vault: Vault, event: str, data: HookInput, *, token_budget: int) -> str | None:
    """What the hook prints on stdout (None: nothing)."""
    from app.write.sessions import TurnIn

    sessions = services.sessions
    now = datetime.now(UTC)
    if event == "session-start":
        project = Path(data.cwd).name if data.cwd else "this project"
        context = await _recall_context(services, vault, START_QUERY.format(project=project or "this project"),
                                        token_budget, header=START_HEADER)
        if context is None:
            return None
        return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}},
                          ensure_ascii=False)
    if event == "user-prompt-submit":
        if data.prompt is None:
            return None
        context = await _recall_context(services, vault, data.prompt, token_budget)
        await sessions.append_turns(vault, data.session_id, [TurnIn("user", data.prompt, now)])
        if context is None:
            return None
        return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}},
                          ensure_ascii=False)
    if event == "stop":
        answer = data.last_assistant_message or (last_answer(Path(data.transcript_path))
                                                  if data.transcript_path else None)
        if answer:
            await sessions.append_turns(vault, data.session_id, [TurnIn("assistant", answer, now)])
        return None
    if event == "session-end":
        await sessions.close_pending(vault, data.session_id)  # the worker's idle close may have done it already
        return None
    raise InvalidInput(f"unknown hook event {event!r}", hint="one of " + ", ".join(EVENTS))


async def _recall_context(services: Services, vault: Vault, prompt: str, token_budget: int, *,
                          header: str = CONTEXT_HEADER) -> str | None:
    from app.read.config import RecallOptions
    from app.read.recall import recall

    result = await recall(services, vault, prompt, RecallOptions(format="text", token_budget=token_budget))
    text = result.render()["text"]
    return f"{header.format(vault=vault.name)}\n{text}" if text else None


def last_answer(transcript: Path) -> str | None:
    """The text of the assistant's last answer in a Claude Code transcript (JSON lines): the assistant's text
    blocks after the last prompt the user typed (tool results do not count as prompts). None when there is none
    or the file cannot be read."""
    try:
        lines = transcript.read_text(encoding="utf-8").splitlines()
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
