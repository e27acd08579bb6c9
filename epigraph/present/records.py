"""The one JSON shape of each graph object (``to_dict`` / ``to_json`` of every result, the CLI's
``--json``, the HTTP API's episode bodies): the model's fields, never an embedding (large, rarely wanted;
read it from the model)."""

from __future__ import annotations

from typing import Any

from ..graph.entity_time import withheld_note
from ..graph.model import Entity, Episode, Fact
from ..graph.temporal import start_unknown


def entity_dict(entity: Entity) -> dict[str, Any]:
    """The entity's fields (no embedding); read as of a time before its summary was written, also
    ``summary_withheld`` (from when the summary is) and ``summary_note`` (saying it is not shown)."""
    data = entity.model_dump(mode="json", exclude={"name_embedding"})
    note = withheld_note(entity)
    if note is not None and entity.summary_withheld is not None:
        data.update(summary_withheld=entity.summary_withheld.isoformat(), summary_note=note)
    return data


def fact_dict(fact: Fact) -> dict[str, Any]:
    """The fact's fields (no embedding) and ``start_unknown``: the statement gave no ``valid_at``, so
    time travel dates it from ``stated_at`` (``graph.temporal.start_of``)."""
    return {**fact.model_dump(mode="json", exclude={"text_embedding"}), "start_unknown": start_unknown(fact)}


def episode_dict(episode: Episode, *, report: bool = False) -> dict[str, Any]:
    """An episode with its status and error; ``report``: with its ingestion report too (what listing
    episodes shows; a search hit leaves it out)."""
    return episode.model_dump(
        mode="json", exclude={"content_embedding"} if report else {"content_embedding", "report"}
    )
