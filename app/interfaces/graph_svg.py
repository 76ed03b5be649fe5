"""An entity graph as a picture: server-rendered SVG (no script, no external resource), for the inspector.

The focus entities (those of the memory shown, or the entity itself) sit on an inner ring (one alone sits in the
middle), their neighbours on an outer ring, each relation an arrow with its predicate at the middle. Every node is a
link (``link(entity_id)``), so a click walks the graph. All text is escaped: entity names come from memories,
untrusted text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from html import escape

MAX_NODES = 40


def graph_svg(relations: Iterable[dict], focus: set[int], link: Callable[[int], str], *, width: int = 760,
              height: int = 460) -> str:
    names: dict[int, str] = {}
    edges: list[tuple[int, int, str]] = []
    for r in relations:
        names.setdefault(r["subject_id"], r["subject"])
        names.setdefault(r["object_id"], r["object"])
        edges.append((r["subject_id"], r["object_id"], r["predicate"]))
    for f in focus:
        names.setdefault(f, f"#{f}")
    inner = [n for n in names if n in focus][:MAX_NODES]
    outer = [n for n in names if n not in focus][:MAX_NODES - len(inner)]
    cx, cy = width / 2, height / 2
    pos: dict[int, tuple[float, float]] = {}
    _ring(pos, inner, cx, cy, 0 if len(inner) == 1 else min(width, height) * 0.16)
    _ring(pos, outer, cx, cy, min(width, height) * 0.40, offset=math.pi / max(len(outer), 1))
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' class='graph' width='{width}' height='{height}' "
             f"viewBox='0 0 {width} {height}' role='img' aria-label='entity graph'>",
             "<defs><marker id='arrow' viewBox='0 0 10 10' refX='22' refY='5' markerWidth='7' markerHeight='7' "
             "orient='auto-start-reverse'><path d='M 0 0 L 10 5 L 0 10 z' fill='#888'/></marker></defs>",
             f"<rect width='{width}' height='{height}' fill='#fbfbfd' stroke='#ddd'/>"]
    for s, o, pred in edges:
        if s not in pos or o not in pos:
            continue
        (x1, y1), (x2, y2) = pos[s], pos[o]
        parts.append(f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' stroke='#999' "
                     "stroke-width='1.4' marker-end='url(#arrow)'/>")
        parts.append(f"<text x='{(x1 + x2) / 2:.1f}' y='{(y1 + y2) / 2 - 4:.1f}' font-size='11' fill='#555' "
                     f"text-anchor='middle'>{escape(_short(pred, 24))}</text>")
    for node, (x, y) in pos.items():
        fill = "#3b6fd4" if node in focus else "#8fb0e8"
        parts.append(f"<a href='{escape(link(node))}'><circle cx='{x:.1f}' cy='{y:.1f}' r='16' fill='{fill}' "
                     f"stroke='#1d3f8a'><title>{escape(names[node])}</title></circle>"
                     f"<text x='{x:.1f}' y='{y + 30:.1f}' font-size='12' text-anchor='middle' fill='#111'>"
                     f"{escape(_short(names[node], 28))}</text></a>")
    parts.append("</svg>")
    return "".join(parts)


def _ring(pos: dict[int, tuple[float, float]], nodes: list[int], cx: float, cy: float, radius: float,
          offset: float = -math.pi / 2) -> None:
    for i, node in enumerate(nodes):
        angle = offset + 2 * math.pi * i / max(len(nodes), 1)
        pos[node] = (cx + radius * math.cos(angle), cy + radius * 0.85 * math.sin(angle))


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
