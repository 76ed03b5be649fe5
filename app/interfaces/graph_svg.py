"""An entity graph as a picture: server-rendered SVG (no script, no external resource), for the inspector.

Laid out so that no two labels collide and no label covers a node:
- each node is a circle with its name below it, wrapped on two lines of at most 18 characters (ellipsized beyond;
  the full name is the node's tooltip). A node and its label make one box, its footprint;
- the focus entities (those of the memory shown, or the entity itself) start on an inner ring (one alone in the
  middle), their neighbours on an outer ring sized for their footprints (staggered when there are many); then
  overlapping footprints are pushed apart until none overlaps (a grid if that does not settle);
- each relation is an arrow; its predicate is placed on the arrow at the first free spot (the middle first, then
  further along, then beside it), never on a node or another label. When some find no spot the nodes spread
  further apart and the predicates are placed again (twice at most); a predicate still without a spot is not
  drawn: it stays the arrow's tooltip and is in the table under the picture.
Text widths are estimated from DejaVu Sans's advance widths (the font named first; most sans fonts are narrower),
rounded up. The picture is as large as its content needs; a narrower page shrinks it to 70% at most, then scrolls it
in its own box.
Every node is a link (``link(entity_id)``), so a click walks the graph. All text is escaped: entity names come from
memories, untrusted text.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable
from html import escape

MAX_NODES = 40
RADIUS = 14
NODE_FONT, EDGE_FONT = 12, 11
LINE_EM = 1.2  # line height of a wrapped name
ASCENT_EM, DESCENT_EM = 0.95, 0.25  # DejaVu Sans: 0.928 and 0.236 of the em, rounded up
LABEL_CHARS, LABEL_LINES, PREDICATE_CHARS = 18, 2, 24
GAP = 6  # free space kept between any two boxes
MARGIN = 10
FONT = "DejaVu Sans, Verdana, sans-serif"
SPREADS = (1.0, 1.3, 1.7)  # how far the nodes may spread apart to make room for the predicates
MIN_SCALE = 0.7  # a narrow page shrinks the picture to this at most (12 px names stay 8.4 px), then scrolls its box
# DejaVu Sans's advance widths of ' ' (32) .. '~' (126), thousandths of an em; other characters: wide ones (CJK)
# 1 em, the rest 0.8 em (more than any Latin letter but W and M).
_ASCII = (318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636,
          636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295,
          295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838,
          500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521,
          392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
Sizes = dict[int, tuple[float, float]]  # a node's extent: half its footprint's width, how far it reaches below


def text_width(text: str, size: float) -> float:
    """An upper estimate of ``text``'s rendered width at ``size`` px."""
    em = 0.0
    for ch in text:
        code = ord(ch)
        if 32 <= code <= 126:
            em += _ASCII[code - 32] / 1000
        else:
            em += 1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.8
    return em * size * 1.06 + 2


def wrap(name: str, chars: int = LABEL_CHARS, lines: int = LABEL_LINES) -> list[str]:
    """``name`` on at most ``lines`` lines of at most ``chars`` characters, broken between words, the last
    ellipsized when the name does not fit."""
    out: list[str] = []
    for word in name.split() or ["?"]:
        if out and len(out[-1]) + 1 + len(word) <= chars:
            out[-1] += " " + word
        else:
            out.append(word)
    if len(out) > lines:
        out = [*out[:lines - 1], " ".join(out[lines - 1:])]
    return [_short(line, chars) for line in out]


def graph_svg(relations: Iterable[dict], focus: set[int], link: Callable[[int], str]) -> str:
    names: dict[int, str] = {}
    edges: dict[tuple[int, int, str], None] = {}  # each relation once, in order
    for r in relations:
        names.setdefault(r["subject_id"], r["subject"])
        names.setdefault(r["object_id"], r["object"])
        edges.setdefault((r["subject_id"], r["object_id"], r["predicate"]), None)
    for f in focus:
        names.setdefault(f, f"#{f}")
    inner = [n for n in names if n in focus][:MAX_NODES]
    outer = [n for n in names if n not in focus][:MAX_NODES - len(inner)]
    labels = {n: wrap(names[n]) for n in (*inner, *outer)}
    sizes = {n: _extent(lines) for n, lines in labels.items()}
    drawn = [edge for edge in edges if edge[0] in sizes and edge[1] in sizes and edge[0] != edge[1]]
    pos, placed = _spread(_layout(inner, outer, sizes), sizes, drawn)
    boxes = [*(_footprint(pos[n], sizes[n]) for n in pos), *(b for _, b in placed)]
    x0, y0 = min(b[0] for b in boxes) - MARGIN, min(b[1] for b in boxes) - MARGIN
    width, height = max(b[2] for b in boxes) - x0 + MARGIN, max(b[3] for b in boxes) - y0 + MARGIN
    at = {n: (x - x0, y - y0) for n, (x, y) in pos.items()}
    spots = {edge: (b[0] - x0, b[1] - y0, b[2] - x0, b[3] - y0) for edge, b in placed}
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' class='graph' width='{width:.0f}' height='{height:.0f}' "
             f"viewBox='0 0 {width:.0f} {height:.0f}' font-family='{FONT}' role='img' aria-label='entity graph' "
             f"style='min-width:{width * MIN_SCALE:.0f}px'>",
             "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' markerHeight='7' "
             "orient='auto-start-reverse'><path d='M 0 0 L 10 5 L 0 10 z' fill='#888'/></marker></defs>",
             f"<rect width='{width:.0f}' height='{height:.0f}' fill='#fbfbfd' stroke='#ddd'/>"]
    hidden = 0
    for edge in drawn:
        s, o, pred = edge
        (x1, y1), (x2, y2) = _trim(at[s], at[o])
        parts.append(f"<g class='edge'><title>{escape(names[s])} — {escape(pred)} → {escape(names[o])}</title>"
                     f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' stroke='#999' "
                     "stroke-width='1.4' marker-end='url(#arrow)'/>")
        if edge in spots:
            bx0, by0, bx1, by1 = spots[edge]
            base = (by0 + by1) / 2 + (ASCENT_EM - (ASCENT_EM + DESCENT_EM) / 2) * EDGE_FONT
            parts.append(f"<text class='edge-label' x='{(bx0 + bx1) / 2:.1f}' y='{base:.1f}' font-size='{EDGE_FONT}'"
                         " fill='#555' text-anchor='middle' paint-order='stroke' stroke='#fbfbfd' stroke-width='3'>"
                         f"{escape(_short(pred, PREDICATE_CHARS))}</text>")
        else:
            hidden += 1
        parts.append("</g>")
    for node, (x, y) in at.items():
        fill = "#3b6fd4" if node in focus else "#8fb0e8"
        top = y + RADIUS + 3 + ASCENT_EM * NODE_FONT
        lines = "".join(f"<tspan x='{x:.1f}' dy='{0 if i == 0 else LINE_EM}em'>{escape(line)}</tspan>"
                        for i, line in enumerate(labels[node]))
        parts.append(f"<a href='{escape(link(node))}'><title>{escape(names[node])}</title><circle cx='{x:.1f}' "
                     f"cy='{y:.1f}' r='{RADIUS}' fill='{fill}' stroke='#1d3f8a'/><text class='node-label' "
                     f"x='{x:.1f}' y='{top:.1f}' font-size='{NODE_FONT}' text-anchor='middle' fill='#111'>{lines}"
                     "</text></a>")
    parts.append("</svg>")
    note = (f"<p class='f'>{hidden} relation name{'' if hidden == 1 else 's'} left out of the picture for room: "
            "point at an arrow, or see the table.</p>") if hidden else ""
    return f"<div class='graphbox'>{''.join(parts)}</div>{note}"


def _extent(label: list[str]) -> tuple[float, float]:
    """How far a node's footprint reaches: half its width, and below its centre (its name under the circle)."""
    half = max(RADIUS, *(text_width(line, NODE_FONT) / 2 for line in label))
    return half, RADIUS + 3 + NODE_FONT * (ASCENT_EM + DESCENT_EM + LINE_EM * (len(label) - 1))


def _spread(pos: dict[int, tuple[float, float]], sizes: Sizes, edges: list[tuple[int, int, str]]
            ) -> tuple[dict[int, tuple[float, float]], list[tuple[tuple[int, int, str], Box]]]:
    """The predicates placed on the layout; when some find no room, the nodes spread further apart (which keeps
    their footprints apart) and the predicates are placed again, up to ``SPREADS``; the try that names the most."""
    best: tuple[dict[int, tuple[float, float]], list[tuple[tuple[int, int, str], Box]]] | None = None
    for factor in SPREADS:
        at = {n: (x * factor, y * factor) for n, (x, y) in pos.items()}
        taken = [_footprint(at[n], sizes[n]) for n in at]
        placed = []
        for edge in edges:
            spot = _edge_label_box(at[edge[0]], at[edge[1]], _short(edge[2], PREDICATE_CHARS), taken)
            if spot is not None:
                placed.append((edge, spot))
                taken.append(spot)
        if best is None or len(placed) > len(best[1]):
            best = (at, placed)
        if len(placed) == len(edges):
            break
    assert best is not None
    return best


def _footprint(at: tuple[float, float], extent: tuple[float, float]) -> Box:
    """A node's circle and its name below it, as one box."""
    (x, y), (half, below) = at, extent
    return (x - half, y - RADIUS, x + half, y + below)


def _layout(inner: list[int], outer: list[int], sizes: Sizes) -> dict[int, tuple[float, float]]:
    pos: dict[int, tuple[float, float]] = {}
    widths = {n: sizes[n][0] * 2 + GAP for n in sizes}
    inner_r = 0 if len(inner) == 1 else max(80, sum(widths[n] for n in inner) / (2 * math.pi))
    _ring(pos, inner, inner_r, -math.pi / 2)
    outer_r = max(inner_r + 120, 160, 0.8 * sum(widths[n] for n in outer) / (2 * math.pi))
    _ring(pos, outer, outer_r, math.pi / max(len(outer), 1), stagger=len(outer) > 8)
    fixed = set(inner) if len(inner) == 1 else set()
    if not _separate(pos, sizes, fixed):
        _grid(pos, sizes)
    return pos


def _ring(pos: dict[int, tuple[float, float]], nodes: list[int], radius: float, offset: float,
          stagger: bool = False) -> None:
    for i, node in enumerate(nodes):
        angle = offset + 2 * math.pi * i / max(len(nodes), 1)
        r = radius * (1.25 if stagger and i % 2 else 1.0)
        pos[node] = (r * math.cos(angle), r * 0.8 * math.sin(angle))


def _separate(pos: dict[int, tuple[float, float]], sizes: Sizes, fixed: set[int],
              sweeps: int = 300) -> bool:
    """Push overlapping footprints apart along the axis of least overlap until none overlaps; False if it does
    not settle within ``sweeps``."""
    nodes = list(pos)
    for _ in range(sweeps):
        moved = False
        for i, a in enumerate(nodes):
            for b in nodes[i + 1:]:
                ba, bb = _footprint(pos[a], sizes[a]), _footprint(pos[b], sizes[b])
                ox = min(ba[2], bb[2]) - max(ba[0], bb[0]) + GAP
                oy = min(ba[3], bb[3]) - max(ba[1], bb[1]) + GAP
                if ox <= 0 or oy <= 0:
                    continue
                moved = True
                if ox < oy:
                    sign = 1 if (bb[0] + bb[2]) >= (ba[0] + ba[2]) else -1
                    dx, dy = sign * (ox + 0.5), 0.0
                else:
                    sign = 1 if (bb[1] + bb[3]) >= (ba[1] + ba[3]) else -1
                    dx, dy = 0.0, sign * (oy + 0.5)
                share_a = 0.0 if a in fixed else 1.0 if b in fixed else 0.5
                pos[a] = (pos[a][0] - dx * share_a, pos[a][1] - dy * share_a)
                pos[b] = (pos[b][0] + dx * (1 - share_a), pos[b][1] + dy * (1 - share_a))
        if not moved:
            return True
    return False


def _grid(pos: dict[int, tuple[float, float]], sizes: Sizes) -> None:
    """Cells as large as the largest footprint: nothing can overlap."""
    boxes = {n: _footprint((0, 0), sizes[n]) for n in pos}
    cell_w = max(b[2] - b[0] for b in boxes.values()) + GAP
    cell_h = max(b[3] - b[1] for b in boxes.values()) + GAP
    cols = math.ceil(math.sqrt(len(pos)))
    for i, node in enumerate(list(pos)):
        pos[node] = ((i % cols) * cell_w, (i // cols) * cell_h)


def _edge_label_box(a: tuple[float, float], b: tuple[float, float], text: str, taken: list[Box]) -> Box | None:
    """The first free spot for an arrow's label: on the arrow, the middle first then further along, then on either
    side of it; None when every spot touches a node or another label."""
    w, h = text_width(text, EDGE_FONT), EDGE_FONT * (ASCENT_EM + DESCENT_EM)
    (x1, y1), (x2, y2) = a, b
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    nx, ny = -(y2 - y1) / length, (x2 - x1) / length  # the arrow's normal
    beside = abs(nx) * w / 2 + abs(ny) * h / 2 + 2
    for t in (0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78):
        for side in (0, 1, -1):
            cx = x1 + (x2 - x1) * t + nx * beside * side
            cy = y1 + (y2 - y1) * t + ny * beside * side
            box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            if not any(_overlap(box, other) for other in taken):
                return box
    return None


def _overlap(a: Box, b: Box, gap: float = GAP / 2) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def _trim(a: tuple[float, float], b: tuple[float, float]) -> tuple[tuple[float, float], tuple[float, float]]:
    """The segment between two nodes' circles (so an arrowhead ends at the circle, not under it)."""
    (x1, y1), (x2, y2) = a, b
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    cut = min(RADIUS + 1, length / 2)
    return (x1 + ux * cut, y1 + uy * cut), (x2 - ux * cut, y2 - uy * cut)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
