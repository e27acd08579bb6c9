"""What changed in a group, behind the handle's ``changes``: the window ``[since, until)``, the kinds and
the limit checked (an :class:`~epigraph.errors.InputError` naming the bad field), the store's
``graph.store_roles.ChangeReads`` role read, and its records grouped by entity
(``graph.changes.what_changed``) into a :class:`~epigraph.present.changes.ChangeList`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from ..errors import InputError
from ..graph.changes import Window, kinds_of, named_entities, what_changed
from ..graph.model import to_utc
from ..graph.roles import role
from ..graph.store_roles import ChangeReads
from ..present.changes import ChangeList
from .parts import Graph, opened


async def group_changes(
    graph: Graph,
    group_id: str,
    since: datetime | str | None,
    until: datetime | str | None,
    kinds: str | Iterable[str] | None,
    limit: int,
) -> ChangeList:
    """``GroupHandle.changes``: what changed in ``group_id`` of ``graph`` (see its docstring)."""
    window = _window(since, until)
    try:
        chosen = kinds_of(kinds)
    except ValueError as exc:
        raise InputError(str(exc), field="kinds") from None
    if limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}", field="limit")
    g = await opened(graph)
    records = await role(g.store, ChangeReads, feature="changes").changes(group_id, window, limit)
    found = what_changed(records, window, chosen)
    episodes = {e.uuid: e for e in records.episodes}
    return ChangeList(group_id, window, found, named_entities(records), episodes, chosen,
                      records.truncated)  # fmt: skip


def _window(since: datetime | str | None, until: datetime | str | None) -> Window:
    """The window ``[since, until)``; :class:`~epigraph.errors.InputError` naming the bad field."""
    bounds: dict[str, datetime | None] = {}
    for name, value in (("since", since), ("until", until)):
        try:
            bounds[name] = None if value is None else to_utc(value)
        except ValueError as exc:
            raise InputError(str(exc), field=name) from None
    try:
        return Window(bounds["since"], bounds["until"])
    except ValueError as exc:
        raise InputError(str(exc), field="until") from None
