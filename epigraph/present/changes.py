"""What changed in a window, as it is shown: :class:`ChangeList`, grouped by entity, the same in the
terminal (``epigraph changes``), in a notebook (``await kg.changes(since, until)``: a table per entity;
``to_pandas()``: one row per change and entity) and as JSON (the HTTP route, the MCP tool, ``--json``).

Each change shows both time axes: the instant that put it in the window (``at``, on its kind's
``axis``), the fact's event time (``valid_at`` -> ``invalid_at``) and system time (``created_at``,
``expired_at``), and where it came from: the episodes that stated it (ids and names), the episode or
correction that retired it, the correction that changed it. A forgotten fact shows only what its
forgetting's audit record keeps: its uuid, when, and the forgetting (its uuid, the door that asked), under
the forgetting's uuid named ``[forgotten]``. ``graph.changes`` says what each kind means.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..graph.changes import KINDS, Change, ChangeKind, Window
from ..graph.corrections import CORRECTION_PREFIX
from ..graph.forgetting import ForgetRecord
from ..graph.model import Episode
from .corrections import correction_dict, describe
from .frames import data_frame
from .records import fact_dict
from .tables import Table, TableView, fmt_time, fmt_validity, shorten

_MUTED = (ChangeKind.RETIRED, ChangeKind.FORGOTTEN)
"""The kinds whose rows a table shows muted: the fact is no longer believed, or no longer held."""


@dataclass(frozen=True, slots=True)
class ChangeList(TableView):
    """The changes of one group in ``window`` (in time order), with the names of the entities they are
    about and the episodes they cite; ``truncated``: the store's limit cut the window's records."""

    group_id: str
    window: Window
    changes: Sequence[Change]
    names: Mapping[str, str] = field(default_factory=dict)
    """Entity uuid -> name (a merged-away entity's from its correction)."""
    episodes: Mapping[str, Episode] = field(default_factory=dict)
    kinds: tuple[ChangeKind, ...] = KINDS
    truncated: bool = False

    def by_entity(self) -> list[tuple[str, list[Change]]]:
        """(entity uuid, its changes in time order) for every entity a change is about, by name; a fact's
        change is under both its ends."""
        grouped: dict[str, list[Change]] = {}
        for change in self.changes:
            for uuid in change.entities:
                grouped.setdefault(uuid, []).append(change)
        return sorted(grouped.items(), key=lambda item: (self.name(item[0]).casefold(), item[0]))

    def name(self, entity_uuid: str) -> str:
        return self.names.get(entity_uuid, entity_uuid)

    def counts(self) -> dict[str, int]:
        """How many changes of each kind asked for (each change once, however many entities it is under)."""
        counts = {kind.value: 0 for kind in self.kinds}
        for change in self.changes:
            counts[change.kind.value] = counts.get(change.kind.value, 0) + 1
        return counts

    # --- JSON -------------------------------------------------------------------------------------------
    def record(self, change: Change) -> dict[str, Any]:
        """One change as JSON data (see the module docstring)."""
        retired = change.retired_by
        return {
            "kind": change.kind.value,
            "axis": change.axis,
            "at": change.at.isoformat(),
            "fact": fact_dict(change.fact) if change.fact is not None else None,
            "entities": [{"uuid": u, "name": self.name(u)} for u in change.entities],
            "sources": [self._source(uuid) for uuid in change.episodes],
            "retired_by": None if retired is None else {
                "fact_uuid": retired.fact_uuid,
                "by_hand": retired.episode_uuid.startswith(CORRECTION_PREFIX),
                "episode": None if retired.episode_uuid.startswith(CORRECTION_PREFIX)
                else self._source(retired.episode_uuid),
            },
            "correction": correction_dict(change.correction) if change.correction is not None else None,
            "forgotten": None if change.forgetting is None else {
                "fact_uuid": change.forgotten, "forgetting": forgetting_dict(change.forgetting),
            },
        }  # fmt: skip

    def _source(self, episode_uuid: str) -> dict[str, Any]:
        episode = self.episodes.get(episode_uuid)
        if episode is None:  # removed since: its id is all that is left
            return {"uuid": episode_uuid, "name": None, "reference_time": None}
        when = episode.reference_time.isoformat()
        return {"uuid": episode_uuid, "name": episode.name, "reference_time": when}

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "since": self.window.since.isoformat() if self.window.since else None,
            "until": self.window.until.isoformat() if self.window.until else None,
            "kinds": [kind.value for kind in self.kinds],
            "counts": self.counts(),
            "truncated": self.truncated,
            "entities": [
                {"uuid": uuid, "name": self.name(uuid), "changes": [self.record(c) for c in changes]}
                for uuid, changes in self.by_entity()
            ],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per change and entity (a DataFrame's rows)."""
        return [
            {
                "entity": self.name(uuid),
                "entity_uuid": uuid,
                "kind": change.kind.value,
                "axis": change.axis,
                "at": change.at,
                "fact": change.fact.text if change.fact else None,
                "fact_uuid": change.fact.uuid if change.fact else change.forgotten,
                "valid_at": change.fact.valid_at if change.fact else None,
                "invalid_at": change.fact.invalid_at if change.fact else None,
                "created_at": change.fact.created_at if change.fact else None,
                "expired_at": change.fact.expired_at if change.fact else None,
                "episodes": list(change.episodes),
                "correction": change.correction.uuid if change.correction else None,
                "forgetting": change.forgetting.uuid if change.forgetting else None,
            }
            for uuid, changes in self.by_entity()
            for change in changes
        ]

    def to_pandas(self) -> Any:
        return data_frame(self.rows())

    # --- tables -----------------------------------------------------------------------------------------
    def _header(self) -> str:
        since = fmt_time(self.window.since, "the beginning")
        until = fmt_time(self.window.until, "now")
        counts = ", ".join(f"{n} {kind}" for kind, n in self.counts().items() if n)
        cut = " (cut at the limit: narrow the window)" if self.truncated else ""
        return f"What changed in {self.group_id!r} from {since} until {until}: {counts or 'nothing'}{cut}"

    def tables(self) -> list[Table]:
        columns = ("when", "change", "fact", "valid", "learned", "retired", "from")
        tables = []
        for uuid, changes in self.by_entity():
            rows = tuple(self._row(change) for change in changes)
            marks = {i: "retired" for i, c in enumerate(changes) if c.kind in _MUTED}
            tables.append(Table(f"{self.name(uuid)} ({len(changes)})", columns, rows, marks=marks))
        return tables

    def _row(self, change: Change) -> tuple[str, ...]:
        fact = change.fact
        what = shorten(fact.text, 80) if fact is not None else ""
        if change.forgetting is not None:
            what = f"a fact forgotten ({change.forgotten})" if change.forgotten else "no fact forgotten"
        if change.correction is not None:
            what = f"{what} [{describe(change.correction)}]".strip()
        return (
            fmt_time(change.at),
            f"{change.kind.value} ({change.axis})",
            what,
            fmt_validity(fact) if fact is not None else "",
            fmt_time(fact.created_at) if fact is not None else "",
            fmt_time(fact.expired_at) if fact is not None else "",
            self._from(change),
        )

    def _from(self, change: Change) -> str:
        if change.forgetting is not None:
            return f"forget by {change.forgetting.call} ({change.forgetting.uuid})"
        if change.correction is not None:
            return f"{change.correction.author} ({change.correction.uuid})"
        retired = change.retired_by
        if retired is not None:
            if retired.episode_uuid.startswith(CORRECTION_PREFIX):
                return f"by hand ({retired.episode_uuid})"
            return "by " + self._episode_name(retired.episode_uuid)
        return ", ".join(self._episode_name(uuid) for uuid in change.episodes)

    def _episode_name(self, uuid: str) -> str:
        episode = self.episodes.get(uuid)
        return (episode.name or uuid) if episode is not None else f"{uuid} (removed)"


def forgetting_dict(record: ForgetRecord) -> dict[str, Any]:
    """What a ``forgotten`` change shows of its forgetting: the audit record's uuid, when, the door that
    asked, what became of the episodes, a retention's cutoff and the ids of the subjects it forgot
    (never a name: the record keeps none)."""
    return {
        "uuid": record.uuid,
        "at": record.at.isoformat(),
        "call": record.call,
        "episodes": record.episodes,
        "older_than": record.older_than.isoformat() if record.older_than else None,
        "entities": list(record.ids.get("entities", [])),
    }
