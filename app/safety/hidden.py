"""Containers that hide text from a human reader but not from a model.

An HTML or markdown comment, an element styled invisible (``display:none``, ``font-size:0``, white-on-white, the
``hidden`` attribute), an image's alt text, a code comment. Hiding text is not an attack by itself (READMEs have
comments for contributors, signup forms have honeypot fields); it is one when the hidden text talks to the model.
So this module only *finds* containers; the ruleset decides by looking at what is inside (a rule hit inside the
container, or text addressed to an AI).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FLAGS = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class Container:
    kind: str
    start: int
    end: int
    inner_start: int
    inner_end: int


_HTML_COMMENT = re.compile(r"<!\s*--(.*?)(?:--\s*>|$)", _FLAGS | re.DOTALL)
_HIDDEN_STYLE = (
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0+)?(?:px|pt|em|rem|%)?\s*(?=;|[\"'])|"
    r"opacity\s*:\s*0(?:\.0+)?\s*(?=;|[\"'])|color\s*:\s*(?:#f{3}|#f{6}|white|transparent|rgba\([^)]*,\s*0\))\b|"
    r"(?:height|width|max-height)\s*:\s*0(?:px)?\s*(?=;|[\"'])|left\s*:\s*-\d{3,}|text-indent\s*:\s*-\d{3,}"
)
_HIDDEN_ELEMENT = re.compile(
    r"<(\w+)\b[^>]*?(?:style\s*=\s*[\"'][^\"']*?(?:" + _HIDDEN_STYLE + r")[^\"']*?[\"']|\shidden\b|"
    r"aria-hidden\s*=\s*[\"']true[\"'])[^>]*>(.*?)(?:</\1\s*>|$)",
    _FLAGS | re.DOTALL,
)
_MD_COMMENT = re.compile(r"^\s*\[(?://|comment|_)\]:\s*(?:#|<>)\s*[(\"'](.*?)[)\"']\s*$", _FLAGS | re.MULTILINE)
_TEMPLATE_COMMENT = re.compile(r"\{#(.*?)#\}|\{\{!--(.*?)--\}\}", re.DOTALL)
_ALT_TEXT = re.compile(r"!\[([^\]\n]{12,})\]\(|<img\b[^>]*\balt\s*=\s*[\"']([^\"']{12,})[\"']", _FLAGS)
_BLOCK_COMMENT = re.compile(r"/\*(.*?)\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"(?:^|(?<=\s))(?:#|//|--)[ \t]*([^\n]{8,})$", re.MULTILINE)

# Cheap cues before any container regex runs.
_CUES = ("<!", "<", "[//]", "[comment]", "{#", "{{!--", "![", "alt", "/*", "#", "//", "--")


def find_containers(text: str) -> list[Container]:
    """All hiding containers in ``text`` (offsets into ``text``)."""
    out: list[Container] = []
    if "<!" in text:
        for m in _HTML_COMMENT.finditer(text):
            out.append(Container("html_comment", m.start(), m.end(), m.start(1), m.end(1)))
    if "<" in text and ("style" in text or "hidden" in text):
        for m in _HIDDEN_ELEMENT.finditer(text):
            out.append(Container("hidden_element", m.start(), m.end(), m.start(2), m.end(2)))
    if "]:" in text:
        for m in _MD_COMMENT.finditer(text):
            out.append(Container("markdown_comment", m.start(), m.end(), m.start(1), m.end(1)))
    if "{#" in text or "{{!--" in text:
        for m in _TEMPLATE_COMMENT.finditer(text):
            g = 1 if m.group(1) is not None else 2
            out.append(Container("template_comment", m.start(), m.end(), m.start(g), m.end(g)))
    if "![" in text or "alt" in text:
        for m in _ALT_TEXT.finditer(text):
            g = 1 if m.group(1) is not None else 2
            out.append(Container("alt_text", m.start(), m.end(), m.start(g), m.end(g)))
    if "/*" in text:
        for m in _BLOCK_COMMENT.finditer(text):
            out.append(Container("code_comment", m.start(), m.end(), m.start(1), m.end(1)))
    if "#" in text or "//" in text or "--" in text:
        for lo, hi in _code_regions(text):
            for m in _LINE_COMMENT.finditer(text, lo, hi):
                out.append(Container("code_comment", m.start(), m.end(), m.start(1), m.end(1)))
    return out


def _code_regions(text: str) -> list[tuple[int, int]]:
    """Where line comments are comments: fenced blocks and <code> elements; the whole text if it looks like bare
    code. A ``#`` outside code is a markdown heading, not a comment."""
    regions = [(m.start(1), m.end(1)) for m in _FENCE.finditer(text)]
    regions += [(m.start(1), m.end(1)) for m in _CODE_TAG.finditer(text)]
    if not regions and _BARE_CODE.search(text):
        regions.append((0, len(text)))
    return regions


_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.DOTALL)
_CODE_TAG = re.compile(r"<(?:code|pre|c\u00f3digo|m\u00e3|\u0643\u0648\u062f)>(.*?)(?:</|$)", re.DOTALL | re.IGNORECASE)
_BARE_CODE = re.compile(
    r"^\s*(?:def\s+\w+\s*\(|import\s+\w+\s*$|from\s+\w+(?:\.\w+)*\s+import\b|class\s+\w+\s*[:(]|"
    r"function\s+\w+\s*\(|(?:const|let|var)\s+\w+\s*=|#include\b|public\s+(?:static|class)\b|package\s+\w+;)",
    re.MULTILINE,
)


# Text addressed to a model (or asking it to emit something) inside a hidden container.
AI_ADDRESSED = re.compile(
    r"\bnote\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant|llm|model|bot|chatbot|gpt)\b|"
    r"\b(?:ai|assistant|llm|model|chatbot|gpt|chatgpt|system|instructions?)\s*:\s*\S|"
    r"\byour\s+(?:response|reply|answer|output|instructions?|prompt|rules|summary)\b|"
    r"\b(?:print|output|state|say|respond|reply|type|display|repeat)\s*(?:the\s+following|:|\s+that\b|\s+exactly|\s+only)|"
    r"\b(?:include|add|insert|mention|promote|recommend)\b[^.\n]{0,60}\b(?:in|to|into)\s+(?:your|the)\s+"
    r"(?:response|answer|reply|summary|output)\b|"
    r"\b(?:output|result|sortie|sa[íi]da|salida|ausgabe|risultato)\b[^'\"\n]{0,24}['\"][^'\"\n]{1,20}['\"]|"
    r"\b(?:password|passcode|secret\s+(?:word|key)|system\s+prompt)\b|"
    r"\byou\s+(?:must|should\s+now|will\s+now|are\s+(?:now|required|instructed))\b|\bassume\s+(?:the\s+following|that)\b|"
    r"\b(?:now\s+entering|override\s+mode|security\s+override)\b|"
    r"给AI|給AI|AI助手|人工智能|忽略|忽視|无视|無視|输出|輸出|复述|複述|指示|指令",
    _FLAGS,
)
