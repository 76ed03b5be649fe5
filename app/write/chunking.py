"""Semantic chunking of raw turns (seed 003): boundaries follow the text's own structure, not token counts.

A turn is one chunk unless it is long. A long turn splits at headings, then blank-line paragraphs and list
blocks, then sentences; adjacent small pieces are joined back until a piece would pass ``max_chars``. A
heading stays with the text under it ("one complete level of one concept").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^\s{0,3}(#{1,4}\s+\S.*|\*\*[^*\n]{2,80}\*\*:?\s*)$")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    max_chars: int = 1200
    min_chars: int = 200


def _sections(text: str) -> list[str]:
    """Split before each heading line; each section keeps its heading."""
    sections: list[list[str]] = [[]]
    for line in text.splitlines():
        if _HEADING.match(line) and any(s.strip() for s in sections[-1]):
            sections.append([])
        sections[-1].append(line)
    return ["\n".join(s).strip() for s in sections if "\n".join(s).strip()]


def _paragraphs(section: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", section) if p.strip()]


def _sentences(paragraph: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(paragraph) if s and s.strip()]


def _pack(pieces: list[str], cfg: ChunkingConfig, sep: str) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) + len(sep) + len(piece) <= cfg.max_chars:
            out[-1] = out[-1] + sep + piece
        else:
            out.append(piece)
    return out


def chunk_turn(text: str, cfg: ChunkingConfig = ChunkingConfig()) -> list[str]:
    text = text.strip()
    if len(text) <= cfg.max_chars:
        return [text] if text else []
    pieces: list[str] = []
    for section in _sections(text):
        if len(section) <= cfg.max_chars:
            pieces.append(section)
            continue
        for para in _paragraphs(section):
            if len(para) <= cfg.max_chars:
                pieces.append(para)
            else:
                pieces.extend(_pack(_sentences(para), cfg, " "))
    chunks = _pack(pieces, cfg, "\n\n")
    # A tiny tail joins its neighbour rather than standing alone.
    if len(chunks) > 1 and len(chunks[-1]) < cfg.min_chars:
        tail = chunks.pop()
        chunks[-1] = chunks[-1] + "\n\n" + tail
    return chunks
