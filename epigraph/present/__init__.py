"""Presentation: how what the graph holds is shown, apart from how it is read.

- :mod:`.tables` — ``Table`` (title, columns, rows of display strings) drawn in the terminal (``rich``)
  and as HTML (``_repr_html_``), the value formats and the ``TableView`` mixin the result types use;
- :mod:`.records` — the one JSON shape of an entity, a fact and an episode;
- :mod:`.frames` — pandas DataFrames and networkx graphs (optional imports);
- :mod:`.draw` — ``GraphDrawing``: a small subgraph as a self-contained SVG;
- :mod:`.listing` — ``EpisodeList`` and ``StatsView``: the listings ``epigraph episodes`` / ``stats``
  print and a notebook shows;
- :mod:`.corrections` — corrections by hand: what one did in a line, its JSON, and ``CorrectionList``
  (``epigraph corrections``);
- :mod:`.changes` — ``ChangeList``: what changed in a window, a table per entity (``epigraph changes``).

It sits below search (``epigraph.search``' result types describe themselves as tables and rows and this
package draws them), so it knows the graph's model, not the readers.
"""

from .changes import ChangeList
from .corrections import CorrectionList
from .draw import GraphDrawing
from .listing import EpisodeList, StatsView
from .tables import Table, TableView

__all__ = ["ChangeList", "CorrectionList", "EpisodeList", "GraphDrawing", "StatsView", "Table", "TableView"]
