"""Draw a small subgraph as a self-contained SVG: pure-Python layout, no JavaScript, no network.

``GraphDrawing`` shows inline in notebooks (``_repr_svg_``) and saves as ``.svg`` or as an ``.html`` page
that embeds the SVG (opens offline in any browser). Retired facts are drawn dashed and grey; hovering an
edge or a node shows its full text (SVG ``<title>``).

The layout is a deterministic Fruchterman-Reingold force layout (numpy, fixed start on a circle, the
center entity pinned while it runs), so the same graph always gives the same picture.
"""

from __future__ import annotations

import html
import math
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..graph.model import Entity, Fact
from .tables import fmt_validity

_ARROW = (
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#777"/></marker></defs>'
)
_PALETTE = ("#4e79a7", "#59a14f", "#edc948", "#b07aa1", "#76b7b2", "#ff9da7", "#9c755f", "#bab0ac")


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    label: str
    title: str = ""
    """Hover text (e.g. the entity summary)."""
    group: str = ""
    """Colour group (e.g. the entity's first label)."""


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    label: str
    title: str = ""
    retired: bool = False


def layout(
    node_ids: Sequence[str],
    edges: Sequence[tuple[str, str]],
    center: str | None = None,
    iterations: int = 300,
) -> dict[str, tuple[float, float]]:
    """Positions in the unit square for ``node_ids`` (deterministic; ``center`` pinned while forces run)."""
    n = len(node_ids)
    if n == 0:
        return {}
    index = {node: i for i, node in enumerate(node_ids)}
    angles = np.arange(n) * (2 * math.pi / n)
    pos = 0.5 + 0.4 * np.column_stack([np.cos(angles), np.sin(angles)])
    pinned = index.get(center) if center is not None else None
    if pinned is not None:
        pos[pinned] = (0.5, 0.5)
    pairs = np.array(
        [(index[a], index[b]) for a, b in edges if a in index and b in index and a != b], dtype=np.int64
    ).reshape(-1, 2)
    k = 1.0 / math.sqrt(n)
    for step in range(iterations if n > 1 else 0):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.linalg.norm(delta, axis=-1), 1e-3)
        disp = (delta / dist[..., None] * (k * k / dist)[..., None]).sum(axis=1)
        if len(pairs):
            d = pos[pairs[:, 0]] - pos[pairs[:, 1]]
            length = np.maximum(np.linalg.norm(d, axis=-1), 1e-3)
            pull = d / length[:, None] * (length * length / k)[:, None]
            np.add.at(disp, pairs[:, 0], -pull)
            np.add.at(disp, pairs[:, 1], pull)
        temperature = 0.1 * (1.0 - step / iterations)
        length = np.maximum(np.linalg.norm(disp, axis=-1), 1e-9)
        pos += disp / length[:, None] * np.minimum(length, temperature)[:, None]
        if pinned is not None:
            pos[pinned] = (0.5, 0.5)
    return _fit(node_ids, pos, pinned)


def _fit(node_ids: Sequence[str], pos: np.ndarray, pinned: int | None) -> dict[str, tuple[float, float]]:
    """Stretch the bounding box onto [0, 1] on each axis (uses the whole canvas; the center stays
    highlighted wherever it lands)."""
    if len(node_ids) == 1:
        return {node_ids[0]: (0.5, 0.5)}
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    span = np.where(hi - lo > 1e-9, hi - lo, 1.0)
    scaled = np.where(hi - lo > 1e-9, (pos - lo) / span, 0.5)
    return {node: (float(x), float(y)) for node, (x, y) in zip(node_ids, scaled, strict=True)}


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True, slots=True)
class GraphDrawing:
    """A drawable subgraph. ``to_svg()`` / ``save(path)`` / inline in notebooks."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    center: str | None = None
    title: str = ""
    width: int = 900
    height: int = 640
    _positions: Mapping[str, tuple[float, float]] = field(default_factory=dict, compare=False, repr=False)

    def positions(self) -> Mapping[str, tuple[float, float]]:
        if not self._positions:
            ids = [n.id for n in self.nodes]
            object.__setattr__(
                self, "_positions", layout(ids, [(e.source, e.target) for e in self.edges], self.center)
            )
        return self._positions

    def to_svg(self) -> str:
        margin = 70.0
        w, h = self.width, self.height
        pos = {
            k: (margin + x * (w - 2 * margin), margin + y * (h - 2 * margin))
            for k, (x, y) in self.positions().items()
        }
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            'font-family="Helvetica, Arial, sans-serif" font-size="12">',
            _ARROW,
            f'<rect width="{w}" height="{h}" fill="white"/>',
        ]
        if self.title:
            parts.append(f'<text x="12" y="22" font-size="15" font-weight="bold">{_esc(self.title)}</text>')
        if not self.nodes:
            parts.append(
                f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" fill="#888">(nothing to draw)</text>'
            )
        parts.extend(self._svg_edges(pos))
        parts.extend(self._svg_nodes(pos))
        parts.extend(self._svg_legend())
        parts.append("</svg>")
        return "\n".join(parts)

    def _svg_edges(self, pos: Mapping[str, tuple[float, float]]) -> list[str]:
        by_pair: dict[frozenset[str], list[Edge]] = defaultdict(list)
        for edge in self.edges:
            if edge.source in pos and edge.target in pos:
                by_pair[frozenset((edge.source, edge.target))].append(edge)
        out: list[str] = []
        for group in by_pair.values():
            for i, edge in enumerate(group):
                out.append(_svg_edge(edge, pos, (i - (len(group) - 1) / 2) * 36.0))
        return out

    def _svg_nodes(self, pos: Mapping[str, tuple[float, float]]) -> list[str]:
        groups = sorted({n.group for n in self.nodes if n.group})
        colour = {g: _PALETTE[i % len(_PALETTE)] for i, g in enumerate(groups)}
        out: list[str] = []
        for node in self.nodes:
            x, y = pos[node.id]
            is_center = node.id == self.center
            fill = "#e15759" if is_center else colour.get(node.group, "#4e79a7")
            r = 16 if is_center else 11
            tip = _esc(node.label + (f"\n{node.title}" if node.title else ""))
            weight = "bold" if is_center else "normal"
            label = _esc(_short(node.label, 28))
            out.append(
                f'<g class="node"><title>{tip}</title>'
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}" stroke="white" stroke-width="2"/>'
                f'<text x="{x:.1f}" y="{y + r + 14:.1f}" text-anchor="middle" font-weight="{weight}" '
                f'paint-order="stroke" stroke="white" stroke-width="3">{label}</text></g>'
            )
        return out

    def _svg_legend(self) -> list[str]:
        """Label colours and, when any is drawn, the retired-fact line style (bottom left)."""
        groups = sorted({n.group for n in self.nodes if n.group})
        entries = [
            (f'<circle cx="6" cy="-4" r="5" fill="{_PALETTE[i % len(_PALETTE)]}"/>', g)
            for i, g in enumerate(groups)
        ]
        if any(e.retired for e in self.edges):
            entries.append(
                ('<line x1="0" y1="-4" x2="14" y2="-4" stroke="#bbb" stroke-dasharray="4,3"/>', "retired")
            )
        out: list[str] = []
        y = self.height - 12 - 16 * (len(entries) - 1)
        for mark, text in entries:
            out.append(
                f'<g class="legend" transform="translate(12,{y})">{mark}'
                f'<text x="20" y="0" font-size="11" fill="#555">{_esc(text)}</text></g>'
            )
            y += 16
        return out

    def to_html(self) -> str:
        """A self-contained page (no scripts, no external resources)."""
        title = _esc(self.title or "epigraph subgraph")
        return (
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
            f'<body style="margin:16px;font-family:sans-serif">\n{self.to_svg()}\n</body></html>\n'
        )

    def save(self, path: str | Path) -> Path:
        """Write ``.svg`` or ``.html`` (by suffix) and return the path."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix not in (".svg", ".html", ".htm"):
            raise ValueError(f"save as .svg or .html, got {target.name!r}")
        target.write_text(self.to_svg() if suffix == ".svg" else self.to_html(), encoding="utf-8")
        return target

    def _repr_svg_(self) -> str:
        return self.to_svg()


def _svg_edge(edge: Edge, pos: Mapping[str, tuple[float, float]], bend: float) -> str:
    (x1, y1), (x2, y2) = pos[edge.source], pos[edge.target]
    style = 'stroke="#bbb" stroke-dasharray="5,4"' if edge.retired else 'stroke="#777"'
    tip = _esc(edge.label + (f"\n{edge.title}" if edge.title else ""))
    label_fill = "#aaa" if edge.retired else "#333"
    if edge.source == edge.target:
        path = f"M{x1:.1f},{y1 - 11:.1f} c-30,-45 30,-45 0,0"
        lx, ly = x1, y1 - 48
    else:
        dx, dy = x2 - x1, y2 - y1
        length = math.hypot(dx, dy) or 1.0
        nx, ny = -dy / length, dx / length
        cx, cy = (x1 + x2) / 2 + nx * bend, (y1 + y2) / 2 + ny * bend
        # stop the arrow at the target circle's rim
        tx, ty = (
            x2 - (x2 - cx) / (math.hypot(x2 - cx, y2 - cy) or 1.0) * 13,
            y2 - (y2 - cy) / (math.hypot(x2 - cx, y2 - cy) or 1.0) * 13,
        )
        path = f"M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {tx:.1f},{ty:.1f}"
        lx, ly = (x1 + 2 * cx + x2) / 4, (y1 + 2 * cy + y2) / 4
    return (
        f'<g class="edge"><title>{tip}</title><path d="{path}" fill="none" {style} stroke-width="1.4" '
        f'marker-end="url(#arrow)"/><text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle" font-size="10" '
        f'fill="{label_fill}" paint-order="stroke" stroke="white" stroke-width="3">'
        f"{_esc(_short(edge.label, 32))}</text></g>"
    )


def subgraph_drawing(
    entities: Mapping[str, Entity],
    facts: Sequence[Fact],
    center: str | None = None,
    title: str = "",
    retired: Collection[str] = (),
) -> GraphDrawing:
    """A drawing of ``facts`` between ``entities`` (endpoints missing from ``entities`` show their uuid);
    ``retired``: the uuids of the facts no longer current (the caller's rule), drawn dashed."""
    ids: dict[str, None] = dict.fromkeys(entities)
    for f in facts:
        ids.setdefault(f.source_uuid)
        ids.setdefault(f.target_uuid)
    nodes = tuple(
        Node(
            id=uid,
            label=entities[uid].name if uid in entities else uid[:8],
            title=entities[uid].summary if uid in entities else "",
            group=entities[uid].labels[0] if uid in entities and entities[uid].labels else "",
        )
        for uid in ids
    )
    edges = tuple(
        Edge(
            source=f.source_uuid,
            target=f.target_uuid,
            label=f.relation,
            title=f"{f.text}\n{fmt_validity(f)}".strip(),
            retired=f.uuid in retired,
        )
        for f in facts
    )
    return GraphDrawing(nodes=nodes, edges=edges, center=center, title=title)
