"""What a delivery says of an episode: the event, its group and ids, status, error and ingestion report,
and how many entities and facts it wrote and retired. Never its content (the user's words stay in the
graph; a receiver that wants them reads the episode through the API)."""

from __future__ import annotations

from typing import Any

from ..episodes.events import EpisodeResult
from ..graph.model import EpisodeStatus, utc_now

DONE, FAILED = "episode.done", "episode.failed"
_EPISODE_FIELDS = {
    "uuid", "name", "kind", "source_description", "reference_time", "created_at", "status", "error", "report",
}  # fmt: skip
EVENTS = (DONE, FAILED)


def event_of(result: EpisodeResult) -> str:
    return DONE if result.episode.status == EpisodeStatus.DONE else FAILED


def payload(result: EpisodeResult, delivery: str) -> dict[str, Any]:
    """The body of one delivery (``v``: its format's version)."""
    episode = result.episode
    return {
        "v": 1,
        "type": event_of(result),
        "delivery": delivery,
        "sent_at": utc_now().isoformat(),
        "group_id": episode.group_id,
        "episode": episode.model_dump(mode="json", include=_EPISODE_FIELDS),
        "entities": len(result.entities),
        "facts": len(result.facts),
        "invalidated": len(result.invalidated),
    }
