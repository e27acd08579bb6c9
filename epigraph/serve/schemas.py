"""The HTTP API's request and response bodies, and its limits.

Requests are checked by pydantic (422 naming the field) and then against :class:`Limits`: a body over
``max_body_bytes`` is 413 before it is read whole (``BodyLimit``, declared or chunked), a batch over
``max_batch`` is 413 naming ``episodes``, an episode over ``max_episode_chars`` is 422 naming
``episodes[i].content``. Strings are stored as sent (no trimming, no escaping): the store keeps them
verbatim. Times are ISO 8601 strings only (:data:`Timestamp`): a number is refused, not read as seconds
since 1970.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..ask import DEFAULT_MODE, AskMode
from ..episodes.inputs import MAX_EPISODE_CHARS, EpisodeInput, content_problem
from ..errors import InputError
from ..graph.derived import CHAIN_KEY_RE
from ..graph.model import Episode, EpisodeKind
from ..search import RECIPES


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 1_000_000
    max_head_bytes: int = 262_144
    """The request line and headers (uvicorn's h11 buffer; over it: 400 in plain text): room for the
    longest URL the API documents, every parameter at its maximum length, percent-encoded."""
    max_dump_bytes: int = 200_000_000
    """The body of a load (``POST .../load``: a dump); larger dumps: ``epigraph load`` on the store."""
    max_batch: int = 100
    max_episode_chars: int = MAX_EPISODE_CHARS
    """The library's one limit (``episodes.inputs.MAX_EPISODE_CHARS``) unless a server sets a lower one."""
    max_question_chars: int = 2_000
    max_results: int = 100
    ask_timeout_s: float = 120.0
    """A question (streamed or not) ends after this long: an error chunk, or 504."""


_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def _not_a_number(value: Any) -> Any:
    """pydantic reads a number (or a string of digits: ``20240501``) as seconds since 1970; an API
    client that sends one meant something else."""
    if isinstance(value, bool | int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        raise ValueError(f"expected an ISO 8601 date-time such as 2024-05-02T10:00:00Z, got {value!r}")
    return value


Timestamp = Annotated[datetime, BeforeValidator(_not_a_number)]
"""A time in a request: an ISO 8601 date-time (naive: UTC) or date, never a number."""


NOT_BLANK = "[^" + "".join(f"\\u{c:04x}" for c in range(0x10000) if chr(c).isspace()) + "]"
"""A pattern (JSON Schema's and pydantic's alike): one character that Python's ``str.strip()`` keeps, as
the search and the ask agent strip what they are given (Python's whitespace is not ECMA's ``\\s``)."""

SearchText = Annotated[str, Query(min_length=1, max_length=2000, pattern=NOT_BLANK, description="the query")]

_RECIPES = sorted(name for name, config in RECIPES.items() if not config.needs_center)


def _known_recipe(name: str) -> str:
    if name not in _RECIPES:
        raise ValueError(f"unknown search recipe {name!r}; known here: {', '.join(_RECIPES)}")
    return name


RecipeName = Annotated[str, AfterValidator(_known_recipe), Field(json_schema_extra={"enum": _RECIPES})]
"""A named search recipe, exactly as listed; not those that rank by distance from a center entity (the
API takes no center: the library and the CLI have them)."""

EpisodeId = Annotated[str, Path(min_length=1, max_length=256, description="the episode's uuid or own id")]
EntityName = Annotated[str, Path(min_length=1, max_length=1000, description="a name, an alias or a uuid")]
FactId = Annotated[str, Path(min_length=1, max_length=200, description="a fact's uuid")]
CONVERSATION_KEY = f"^{CHAIN_KEY_RE.pattern}$"
"""What the server takes as a conversation key (``graph.derived.CHAIN_KEY_RE``: 1-512 characters without
control characters), as a pattern JSON Schema and pydantic read alike."""
ConversationKey = Annotated[
    str,
    Path(min_length=1, max_length=512, pattern=CONVERSATION_KEY,
         description="the conversation's key: its episodes' source"),
]  # fmt: skip


class LimitExceeded(Exception):
    """413 or 422 naming the field that went over its limit."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(message)
        self.status, self.field, self.message = status, field, message


class EpisodeIn(BaseModel):
    """One episode to add (the fields of a JSONL episode line, without the group: it is in the path)."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1)
    reference_time: Timestamp = Field(description="when it was said or written (naive: UTC)")
    kind: EpisodeKind = EpisodeKind.MESSAGE
    speaker: str | None = None
    name: str = ""
    source: str = Field(default="", description="where it came from (source_description)")
    id: str | None = Field(default=None, description="your own id: re-adding it with the same content is "
                           "a no-op, with other content refused (409)")  # fmt: skip

    def to_input(self, group_id: str) -> EpisodeInput:
        """The library's input: the fields of an episode file's line (``FIELDS``), read the same way."""
        return EpisodeInput.coerce({**self.model_dump(), "group_id": group_id})


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
        if (problem := content_problem(episode.content, limits.max_episode_chars)) is not None:
            raise LimitExceeded(422, f"episodes[{i}].content", problem)
        try:
            out.append(episode.to_input(group_id))
            out[-1].to_episode()  # the model's own checks (ids, names), before anything is stored
        except (ValueError, InputError) as exc:
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

    question: str = Field(min_length=1, pattern=NOT_BLANK)
    as_of: Timestamp | None = Field(default=None, description="answer as of this time (its 'now')")
    known_at: Timestamp | None = Field(default=None, description="from what the graph knew at this time")
    streaming: bool = Field(default=False, strict=True,
                            description="true: server-sent events of the dialog's chunks")  # fmt: skip
    mode: AskMode | None = Field(
        default=None,
        description="context: one context assembled without the model, one answering call; agent: "
        "planned lookups; auto: the context first, the agent when its answer found nothing "
        f"(default: {DEFAULT_MODE})",
    )


class RevealIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        min_length=1, max_length=100_000,
        description="a text of the group (an episode's, a fact's, an answer's) with placeholders (<PHONE_3>)",
    )  # fmt: skip


SearchScope = Literal["all", "facts", "entities", "episodes", "communities"]


class ConversationsUpdateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keys: list[Annotated[str, Field(min_length=1, max_length=512, pattern=CONVERSATION_KEY)]] | None = Field(
        default=None, max_length=100, description="the conversations to update (default: every one behind)"
    )
    rebuild: bool = Field(default=False, strict=True, description="fold every episode again, from the start")


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``max_bytes`` (declared or streamed); a load's body
    (a path ending in ``/load``: a dump) may have up to ``max_dump_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_dump_bytes: int | None = None) -> None:
        self.app, self.max_bytes = app, max_bytes
        self.max_dump_bytes = max_bytes if max_dump_bytes is None else max_dump_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_dump_bytes if str(scope.get("path", "")).endswith("/load") else self.max_bytes
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await self._refuse(send, limit)
            return
        seen, started = 0, False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge(limit)
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except _TooLarge:
            if not started:
                await self._refuse(send, limit)

    async def _refuse(self, send: Send, limit: int) -> None:
        body = json.dumps(error_body("body", _TooLarge(limit).detail)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(HTTPException):
    """Raised by the counted ``receive``: FastAPI passes an ``HTTPException`` from reading the body on
    as it is (any other exception there becomes its 400 "There was an error parsing the body")."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"request body larger than {max_bytes} bytes")


def error_body(field: str | None, message: str) -> dict[str, Any]:
    """The body of every error the API itself answers: ``{"detail": ..., "field": ...}``."""
    return {"detail": message, "field": field}
