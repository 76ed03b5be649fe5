"""Semantic chunking of raw turns (seed 003): boundaries follow the text's own structure, not token counts.

A turn is one chunk unless it is long. A long turn splits at headings, then blank-line paragraphs and list
blocks, then sentences; adjacent small pieces are joined back until a piece would pass ``max_chars``. A
heading stays with the text under it ("one complete level of one concept").

Every chunk fits, whatever the text: a sentence still longer than ``max_chars`` (code, a table, CJK without
punctuation, a CSV line) splits at its line breaks, then at spaces, and a run with neither (one long token,
base64, an emoji run) at ``max_chars`` grapheme clusters: never inside one (a surrogate pair, a flag, a family
emoji with its joiners, a letter with its combining marks stays whole).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import regex

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


_GRAPHEME = regex.compile(r"\X")

# A piece to pack: the glue that joins it to the piece before it (a boundary of the text: a blank line, a line
# break, a space; or nothing, between two cuts of one long run), and its text.
Part = tuple[str, str]


def _pack(parts: list[Part], cfg: ChunkingConfig) -> list[Part]:
    """Adjacent parts joined by their glue while they fit; each result keeps the glue of its first part."""
    out: list[Part] = []
    for glue, piece in parts:
        if out and len(out[-1][1]) + len(glue) + len(piece) <= cfg.max_chars:
            out[-1] = (out[-1][0], out[-1][1] + glue + piece)
        else:
            out.append((glue, piece))
    return out


def _graphemes(text: str, limit: int) -> list[str]:
    """``text`` in runs of at most ``limit`` characters, cut only between grapheme clusters (one cluster longer
    than ``limit``, a pathological run of combining marks, is cut by characters: it cannot fit otherwise)."""
    out: list[str] = []
    run = ""
    for g in _GRAPHEME.findall(text):
        if len(g) > limit:
            if run:
                out.append(run)
                run = ""
            out.extend(g[i:i + limit] for i in range(0, len(g), limit))
        elif len(run) + len(g) > limit:
            out.append(run)
            run = g
        else:
            run += g
    if run:
        out.append(run)
    return out


def _fit(piece: str, cfg: ChunkingConfig, glue: str) -> list[Part]:
    """A piece as parts of at most ``max_chars``: whole when it fits; else at its line breaks, then its spaces,
    then between its grapheme clusters (those cuts glue back with nothing: packing restores the run)."""
    if len(piece) <= cfg.max_chars:
        return [(glue, piece)]
    lines = [ln.strip() for ln in piece.split("\n") if ln.strip()]
    if len(lines) > 1:
        return [part for i, ln in enumerate(lines) for part in _fit(ln, cfg, glue if i == 0 else "\n")]
    words = piece.split()
    if len(words) > 1:
        return [part for i, w in enumerate(words) for part in _fit(w, cfg, glue if i == 0 else " ")]
    return [(glue if i == 0 else "", run) for i, run in enumerate(_graphemes(piece, cfg.max_chars))]


def chunk_turn(text: str, cfg: ChunkingConfig = ChunkingConfig()) -> list[str]:
    text = text.strip()
    if len(text) <= cfg.max_chars:
        return [text] if text else []
    pieces: list[Part] = []
    for section in _sections(text):
        if len(section) <= cfg.max_chars:
            pieces.append(("\n\n", section))
            continue
        for para in _paragraphs(section):
            if len(para) <= cfg.max_chars:
                pieces.append(("\n\n", para))
            else:
                pieces.extend(_pack([part for i, sentence in enumerate(_sentences(para))
                                     for part in _fit(sentence, cfg, "\n\n" if i == 0 else " ")], cfg))
    chunks = _pack(pieces, cfg)
    # A tiny tail joins its neighbour rather than standing alone.
    if len(chunks) > 1 and len(chunks[-1][1]) < cfg.min_chars:
        glue, tail = chunks.pop()
        chunks[-1] = (chunks[-1][0], chunks[-1][1] + glue + tail)
    return [c for _, c in chunks]
