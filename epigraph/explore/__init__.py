"""The interactive view of the graph: pan, zoom, hover, click to expand, and a slider through time.

- :class:`GraphView` (:mod:`.view`) — a subgraph or a search result; ``_repr_html_`` in notebooks,
  ``save("x.html")``, and the page ``epigraph serve`` shows at ``/``;
- :mod:`.gather` — reads a view from a store (an entity's neighbourhood, a search, cited facts);
- :mod:`.payload` — the JSON the page carries; :mod:`.page` — the self-contained HTML document
  (Cytoscape.js from the pinned npm package, inlined).
"""

from __future__ import annotations

from .page import MissingAsset
from .view import GraphView

__all__ = ["GraphView", "MissingAsset"]
