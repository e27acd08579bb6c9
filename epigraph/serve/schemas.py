"""The HTTP API's request and response bodies, and its limits.

Requests are checked by pydantic (422 naming the field) and then against :class:`Limits`: a body over
``max_body_bytes`` is 413 before it is read whole (``BodyLimit``), a batch over ``max_batch`` is 413
naming ``episodes``, an episode over ``max_episode_chars`` is 422 naming ``episodes[i].content``.
Strings are stored as sent (no trimming, no escaping): the store keeps them verbatim.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..graph.model import Episode, EpisodeKind
from ..pipeline.inputs import EpisodeInput


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 1_000_000
    max_batch: int = 100
    max_episode_chars: int = 20_000
    max_question_chars: int = 2_000
    max_results: int = 100
    ask_timeout_s: float = 120.0
    """A question (streamed or not) ends after this long: an error chunk, or 504."""


class LimitExceeded(Exception):
    """413 or 422 naming the field that went over its limit."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(message)
        self.status, self.field, self.message = status, field, message


class EpisodeIn(BaseModel):
    """One episode to add (the fields of a JSONL episode line, without the group: it is in the path)."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1)
    reference_time: datetime = Field(description="when it was said or written (naive: UTC)")
    kind: EpisodeKind = EpisodeKind.MESSAGE
    speaker: str | None = None
    name: str = ""
    source: str = Field(default="", description="where it came from (source_description)")
    id: str | None = Field(default=None, description="your own id: re-adding it is a no-op")

    def to_input(self, group_id: str) -> EpisodeInput:
        return EpisodeInput(
            content=self.content,
            reference_time=self.reference_time,
            group_id=group_id,
            kind=self.kind,
            speaker=self.speaker,
            name=self.name,
            source_description=self.source,
            episode_id=self.id,
        )


class EpisodeBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episodes: list[EpisodeIn] = Field(min_length=1)


def checked_inputs(group_id: str, episodes: list[EpisodeIn], limits: Limits) -> list[EpisodeInput]:
    """The episodes as library inputs, within the limits (``LimitExceeded`` naming the field)."""
    if len(episodes) > limits.max_batch:
        raise LimitExceeded(413, "episodes", f"at most {limits.max_batch} episodes per request, "
                            f"got {len(episodes)}")  # fmt: skip
    out = []
    for i, episode in enumerate(episodes):
        if len(episode.content) > limits.max_episode_chars:
            raise LimitExceeded(422, f"episodes[{i}].content", f"at most {limits.max_episode_chars} "
                                f"characters, got {len(episode.content)}")  # fmt: skip
        try:
            out.append(episode.to_input(group_id))
            out[-1].to_episode()  # the model's own checks (ids, names), before anything is stored
        except ValueError as exc:
            raise LimitExceeded(422, f"episodes[{i}]", str(exc).splitlines()[0]) from None
    return out


class AcceptedEpisode(BaseModel):
    uuid: str
    status: str


class Accepted(BaseModel):
    """Answer to an add: every episode is stored (``pending``, or as it already was) when this is sent."""

    group_id: str
    episodes: list[AcceptedEpisode]

    @classmethod
    def of(cls, group_id: str, episodes: list[Episode]) -> Accepted:
        accepted = [AcceptedEpisode(uuid=e.uuid, status=e.status.value) for e in episodes]
        return cls(group_id=group_id, episodes=accepted)


class AskIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, pattern=r"\S")
    as_of: datetime | None = Field(default=None, description="answer as of this time (its 'now')")
    known_at: datetime | None = Field(default=None, description="from what the graph knew at this time")
    streaming: bool = Field(default=False, description="true: server-sent events of the dialog's chunks")


SearchScope = Literal["all", "facts", "entities", "episodes"]


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``max_bytes`` (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        seen, started = 0, False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except _TooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(error_body("body", f"request body larger than {self.max_bytes} bytes")).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


def error_body(field: str | None, message: str) -> dict[str, Any]:
    """The body of every error the API itself answers: ``{"detail": ..., "field": ...}``."""
    return {"detail": message, "field": field}
