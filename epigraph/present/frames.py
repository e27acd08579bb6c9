"""pandas DataFrames and networkx graphs of what the graph holds (both optional: ``epigraph[notebook]``).

``data_frame(rows)`` is a DataFrame of plain row dicts (each result type's ``row()``); ``to_networkx`` a
``MultiDiGraph`` of entities (nodes) and facts (edges keyed by fact uuid). Neither is imported until used.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from ..graph.model import Entity, Fact
from ..graph.temporal import start_unknown


def require(module: str, extra: str = "notebook") -> Any:
    """Import an optional dependency or say exactly how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{module} is needed for this; install it with `pip install 'epigraph[{extra}]'`"
        ) from exc


def data_frame(rows: Iterable[Mapping[str, Any]]) -> Any:
    """A ``pandas.DataFrame`` of the rows (one column per key)."""
    return require("pandas").DataFrame([dict(row) for row in rows])


def to_networkx(
    entities: Mapping[str, Entity],
    facts: Sequence[Fact],
    scores: Mapping[str, float] | None = None,
    retired: Collection[str] = (),
) -> Any:
    """A ``networkx.MultiDiGraph`` of entities (nodes) and facts (edges keyed by fact uuid); ``retired``:
    the uuids of the facts no longer current (the caller's rule), flagged on their edges."""
    scores = scores or {}
    nx = require("networkx")
    graph = nx.MultiDiGraph()
    for uid, e in entities.items():
        graph.add_node(uid, name=e.name, labels=list(e.labels), summary=e.summary, aliases=list(e.aliases))
    for f in facts:
        for uid in (f.source_uuid, f.target_uuid):
            if uid not in graph:
                graph.add_node(uid, name=uid)
        graph.add_edge(
            f.source_uuid,
            f.target_uuid,
            key=f.uuid,
            relation=f.relation,
            text=f.text,
            valid_at=f.valid_at,
            invalid_at=f.invalid_at,
            stated_at=f.stated_at,
            start_unknown=start_unknown(f),
            created_at=f.created_at,
            expired_at=f.expired_at,
            retired=f.uuid in retired,
            score=scores.get(f.uuid),
        )
    return graph
