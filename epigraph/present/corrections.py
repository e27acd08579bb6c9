"""Corrections by hand as they are shown: one line saying what a correction did (:func:`describe`), its
JSON shapes (:func:`correction_dict`, the short form an entity's view lists; :func:`correction_record`,
the whole record a correction command answers with) and :class:`CorrectionList`, the listing
``epigraph corrections`` prints and a notebook shows
(``CorrectionList(group_id, await kg.corrections.history())``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import RenderableType

from ..graph.corrections import Correction, CorrectionOp
from .tables import Table, fmt_time, html_tables, rich_table


def describe(correction: Correction) -> str:
    """One line saying what the correction did, e.g. ``merged 'Robert' into 'Bob' (2 facts moved)``."""
    before, after = correction.before, correction.after
    op = correction.operation
    old_facts = {f.uuid: f for f in before.facts}
    if op == CorrectionOp.ADD_FACT:
        added = [f for f in after.facts if f.uuid not in old_facts]
        retired = len(after.facts) - len(added)
        text = f"added {added[0].text!r}" if added else "added a fact"
        return text + (f", retiring {retired} fact(s)" if retired else "")
    if op == CorrectionOp.RETIRE_FACT and after.facts:
        fact = after.facts[0]
        return f"retired {fact.text!r}" + (f" (ended {_day(fact.invalid_at)})" if fact.invalid_at else "")
    if op == CorrectionOp.EDIT_FACT and after.facts and before.facts:
        old, new = before.facts[0], after.facts[0]
        changed = [
            f"{key} {_shown(getattr(old, key))} -> {_shown(getattr(new, key))}"
            for key in ("text", "relation", "valid_at", "invalid_at")
            if getattr(old, key) != getattr(new, key)
        ]
        return f"edited {old.text!r}: " + "; ".join(changed)
    if op == CorrectionOp.DELETE_FACT and before.facts:
        restored = len(after.facts)
        return f"deleted {before.facts[0].text!r}" + (f", restoring {restored} fact(s)" if restored else "")
    if op == CorrectionOp.MERGE_ENTITIES and len(before.entities) >= 2 and after.entities:
        kept = after.entities[0]
        gone = next((e for e in before.entities if e.uuid != kept.uuid), before.entities[1])
        return f"merged {gone.name!r} into {kept.name!r} ({len(after.facts)} fact(s) moved)"
    if op == CorrectionOp.RENAME_ENTITY and before.entities and after.entities:
        return f"renamed {before.entities[0].name!r} to {after.entities[0].name!r}"
    if op == CorrectionOp.UNDO:
        return f"undid {correction.undoes}"
    return op.value.replace("_", " ")


def _day(value: datetime | None) -> str:
    return value.date().isoformat() if value else "-"


def _shown(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return repr(value) if isinstance(value, str) else str(value)


def correction_dict(correction: Correction) -> dict[str, Any]:
    """The short form of a correction (an entity's history): who, when, what, why."""
    return {
        "uuid": correction.uuid,
        "operation": correction.operation.value,
        "author": correction.author,
        "created_at": correction.created_at.isoformat(),
        "reason": correction.reason,
        "undoes": correction.undoes,
        "description": describe(correction),
    }


def correction_record(correction: Correction) -> dict[str, Any]:
    """The whole correction (its records before and after) and what it did in one line."""
    return {**correction.model_dump(mode="json"), "description": describe(correction)}


@dataclass(frozen=True, slots=True)
class CorrectionList:
    """Corrections by hand of one group (as read: newest first): when, who, what, why."""

    group_id: str
    corrections: Sequence[Correction]

    def records(self) -> list[dict[str, Any]]:
        return [correction_dict(c) for c in self.corrections]

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps({"group_id": self.group_id, "corrections": self.records()}, indent=indent)

    def table(self) -> Table:
        rows = tuple(
            (fmt_time(c.created_at), c.author, describe(c), c.reason, c.uuid) for c in self.corrections
        )
        title = f"Corrections by hand in group {self.group_id!r} ({len(self.corrections)})"
        return Table(title, ("when", "by", "what", "why", "correction"), rows, empty="no corrections")

    def __rich__(self) -> RenderableType:
        return rich_table(self.table())

    def _repr_html_(self) -> str:
        return html_tables([self.table()])
