"""ChatGPT's data export: ``conversations.json``, a list of conversations, each a tree of messages.

A conversation's ``mapping`` holds nodes ``{id, message, parent, children}``; editing a prompt or regenerating
an answer adds a sibling branch, and ``current_node`` is the leaf the user last saw. The main line is that leaf's
path back to the root: what the conversation finally was, and what the user went on from.

Other branches are skipped by default: they are answers the user regenerated (near-copies of the kept one, which
Dedup would mostly SKIP) and prompts the user edited away (what they chose not to say). ``branches=True`` keeps
each as a session of its own (``<conversation id>/branch/<leaf id>``, from the fork to its leaf), for someone who
wants everything that was ever written.

Kept: what the user and the assistant said to each other (author.role user / assistant, text parts, recipient
"all"); left out: the hidden system message and custom instructions, tool calls and their output (code,
browsing), the reasoning summaries of thinking models, and image parts (their text parts stay).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.errors import InvalidInput
from app.importers import Conversation, ImportTurn

TEXT_TYPES = ("text", "multimodal_text")


def read(data: Any, *, branches: bool = False) -> list[Conversation]:
    if not isinstance(data, list):
        raise InvalidInput("a ChatGPT export is a JSON list of conversations", hint="the conversations.json file "
                           "of the export's zip")
    out: list[Conversation] = []
    for index, conv in enumerate(data):
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            raise InvalidInput(f"ChatGPT conversation {index} has no 'mapping'")
        out.extend(_conversation(conv, index, branches))
    return out


def _conversation(conv: dict, index: int, branches: bool) -> list[Conversation]:
    mapping: dict[str, dict] = conv["mapping"]
    conv_id = str(conv.get("conversation_id") or conv.get("id") or f"conversation-{index}")
    title = conv.get("title") or None
    started = _time(conv.get("create_time")) or datetime.now(UTC)
    leaf = conv.get("current_node")
    if leaf not in mapping:  # an export without current_node: the last-created leaf
        leaves = [k for k, n in mapping.items() if not n.get("children")]
        leaf = max(leaves, key=lambda k: _created(mapping[k]), default=None)
    main = _path_to_root(mapping, leaf)
    found = [Conversation(conv_id, title, _turns(mapping, main, started))]
    if branches:
        on_main = set(main)
        for node_id, node in mapping.items():
            if node.get("children") or node_id in on_main:
                continue
            segment = []
            for n in reversed(_path_to_root(mapping, node_id)):  # from the leaf up to the fork
                if n in on_main:
                    break
                segment.append(n)
            turns = _turns(mapping, list(reversed(segment)), started)
            if turns:
                found.append(Conversation(f"{conv_id}/branch/{node_id}", f"{title or conv_id} (branch)", turns))
    return [c for c in found if c.turns]


def _path_to_root(mapping: dict[str, dict], leaf: str | None) -> list[str]:
    path: list[str] = []
    seen: set[str] = set()
    node_id = leaf
    while node_id is not None and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        path.append(node_id)
        node_id = mapping[node_id].get("parent")
    return list(reversed(path))


def _turns(mapping: dict[str, dict], path: list[str], started: datetime) -> tuple[ImportTurn, ...]:
    turns: list[ImportTurn] = []
    last = started
    for node_id in path:
        m = mapping[node_id].get("message")
        if not isinstance(m, dict):
            continue
        role = (m.get("author") or {}).get("role")
        content = m.get("content") or {}
        meta = m.get("metadata") or {}
        if role not in ("user", "assistant") or content.get("content_type") not in TEXT_TYPES:
            continue
        if m.get("recipient") not in (None, "all") or meta.get("is_visually_hidden_from_conversation"):
            continue
        text = "\n".join(p for p in content.get("parts") or () if isinstance(p, str) and p.strip()).strip()
        if not text:
            continue
        last = _time(m.get("create_time")) or last  # a message without a time: no earlier than the one before
        turns.append(ImportTurn(role, text, last))
    return tuple(turns)


def _created(node: dict) -> float:
    m = node.get("message") or {}
    return float(m.get("create_time") or 0)


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float) and value > 0:
        return datetime.fromtimestamp(value, UTC)
    return None
