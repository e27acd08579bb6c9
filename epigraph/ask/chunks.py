"""The one schema of an ask dialog, streamed or not (``../shared/STREAMING.md``, "Agent dialogs").

A dialog is a sequence of messages, each one or more :class:`AskChunk` of one ``chunk_type``:
``thought`` -> ``action`` -> ``observation`` (repeated) -> ``answer``; or, when something fails,
``error``. Invariants (tests check them; :func:`check_dialog` is their executable form):

- every message ends with a chunk whose ``end_of_message`` is True (a message cut short by an error is
  closed by an empty chunk first);
- exactly one chunk has ``end_of_dialog``: the last one;
- an ``error`` is one chunk, always the last; nothing follows it;
- the last chunk carries the usage (tokens, calls, lookups), the latency and, on an answer, the
  citations and the ids the model cited without having seen them (dropped).

Non-streaming callers get the same content as one :class:`Answer` (:func:`collect`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..prompts.protocol import Usage

ChunkType = Literal["thought", "action", "observation", "answer", "error"]
CHUNK_TYPES: tuple[ChunkType, ...] = ("thought", "action", "observation", "answer", "error")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass(frozen=True, slots=True)
class Citation:
    """A fact or an episode the answer cites (by ``id``: ``F1``, ``E2``, ... as the model saw them)."""

    id: str
    kind: Literal["fact", "episode"]
    uuid: str
    text: str
    valid_at: datetime | None = None
    """Fact: when it started to hold (with ``start_unknown``: when it was first stated, the start time
    travel uses; ``None``: open); episode: its reference time."""
    invalid_at: datetime | None = None
    """Fact: when it stopped holding (as the graph believes it at ``known_at``)."""
    retired: bool = False
    """Fact: it no longer holds at the dialog's "now" (its ``as_of``): history, never current."""
    episode_uuids: tuple[str, ...] = ()
    """The episodes a fact came from (an episode: itself)."""
    start_unknown: bool = False
    """Fact: its statement gave no start date (``graph.temporal.start_unknown``)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "uuid": self.uuid,
            "text": self.text,
            "valid_at": _iso(self.valid_at),
            "invalid_at": _iso(self.invalid_at),
            "retired": self.retired,
            "episode_uuids": list(self.episode_uuids),
            "start_unknown": self.start_unknown,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Citation:
        return cls(
            id=data["id"],
            kind=data["kind"],
            uuid=data["uuid"],
            text=data["text"],
            valid_at=_parse(data.get("valid_at")),
            invalid_at=_parse(data.get("invalid_at")),
            retired=bool(data.get("retired")),
            episode_uuids=tuple(data.get("episode_uuids") or ()),
            start_unknown=bool(data.get("start_unknown")),
        )


@dataclass(frozen=True, slots=True)
class AskUsage:
    """What a dialog cost. Tokens are totals over every model call of the dialog."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    lookups: int = 0
    context_tokens: int = 0
    """Tokens of the facts and episodes shown to the answering call (the retrieved context)."""
    estimated: bool = False
    """Some counts were computed locally (the server sent no usage)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "lookups": self.lookups,
            "context_tokens": self.context_tokens,
            "estimated": self.estimated,
        }


class Meter:
    """What a dialog has cost so far (model calls and their tokens, lookups, the context shown)."""

    def __init__(self) -> None:
        self.usage, self.calls, self.lookups, self.context_tokens = Usage(), 0, 0, 0

    def add(self, usage: Usage | None, calls: int) -> None:
        self.usage = self.usage + (usage or Usage())
        self.calls += calls

    def total(self) -> AskUsage:
        u = self.usage
        return AskUsage(
            self.calls, u.input_tokens, u.output_tokens, self.lookups, self.context_tokens, u.estimated
        )


@dataclass(frozen=True, slots=True)
class AskChunk:
    """One piece of a dialog. ``data`` holds the structured side of a message (an action's ``tool`` and
    ``args``; an observation's ``items``; an error's ``type``); the last chunk holds the totals."""

    chunk_type: ChunkType
    content: str = ""
    end_of_message: bool = False
    end_of_dialog: bool = False
    data: Mapping[str, Any] = field(default_factory=dict)
    citations: tuple[Citation, ...] = ()
    dropped: tuple[str, ...] = ()
    """Ids the model cited that no lookup had returned (left out of the text and the citations)."""
    usage: AskUsage | None = None
    latency_ms: float | None = None
    exception: Exception | None = field(default=None, repr=False, compare=False)
    """An error chunk: the exception itself (not serialized)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "chunk_type": self.chunk_type,
            "content": self.content,
            "end_of_message": self.end_of_message,
            "end_of_dialog": self.end_of_dialog,
        }
        if self.data:
            out["data"] = dict(self.data)
        if self.end_of_dialog:
            out["citations"] = [c.to_dict() for c in self.citations]
            out["dropped"] = list(self.dropped)
            out["usage"] = self.usage.to_dict() if self.usage else None
            out["latency_ms"] = self.latency_ms
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AskChunk:
        """The chunk :meth:`to_dict` describes (e.g. a line of ``epigraph --json ask``)."""
        usage = data.get("usage")
        return cls(
            chunk_type=data["chunk_type"],
            content=data.get("content", ""),
            end_of_message=bool(data.get("end_of_message")),
            end_of_dialog=bool(data.get("end_of_dialog")),
            data=data.get("data") or {},
            citations=tuple(Citation.from_dict(c) for c in data.get("citations") or ()),
            dropped=tuple(data.get("dropped") or ()),
            usage=AskUsage(**usage) if usage else None,
            latency_ms=data.get("latency_ms"),
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """A whole dialog at once: what ``ask(..., streaming=False)`` returns.

    A failed dialog is still an ``Answer``: ``error`` holds the message (``ok`` is False) and the other
    fields what came before it, as with a failed stream (call :meth:`raise_for_error` to raise).
    """

    question: str
    text: str
    citations: tuple[Citation, ...] = ()
    thoughts: tuple[str, ...] = ()
    actions: tuple[Mapping[str, Any], ...] = ()
    """Each lookup: ``{"tool": ..., "args": {...}}``."""
    observations: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    usage: AskUsage = field(default_factory=AskUsage)
    latency_ms: float = 0.0
    error: str | None = None
    exception: Exception | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def raise_for_error(self) -> None:
        """Raise the exception that ended the dialog, if one did."""
        if self.exception is not None:
            raise self.exception

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "text": self.text,
            "citations": [c.to_dict() for c in self.citations],
            "thoughts": list(self.thoughts),
            "actions": [dict(a) for a in self.actions],
            "observations": list(self.observations),
            "dropped": list(self.dropped),
            "usage": self.usage.to_dict(),
            "latency_ms": self.latency_ms,
            "error": self.error,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str)


async def collect(question: str, chunks: AsyncIterable[AskChunk]) -> Answer:
    """Read a whole dialog into one :class:`Answer` (the non-streaming form of the same content)."""
    seen: list[AskChunk] = [chunk async for chunk in chunks]
    return answer_of(question, seen)


def answer_of(question: str, chunks: Sequence[AskChunk]) -> Answer:
    """The :class:`Answer` a finished sequence of chunks amounts to."""
    messages = _messages(chunks)
    last = chunks[-1] if chunks else AskChunk("error", "the dialog produced nothing", True, True)
    return Answer(
        question=question,
        text="".join(c.content for c in chunks if c.chunk_type == "answer"),
        citations=last.citations,
        thoughts=tuple(text for kind, text, _ in messages if kind == "thought"),
        actions=tuple(data for kind, _, data in messages if kind == "action"),
        observations=tuple(text for kind, text, _ in messages if kind == "observation"),
        dropped=last.dropped,
        usage=last.usage or AskUsage(),
        latency_ms=last.latency_ms or 0.0,
        error=last.content if last.chunk_type == "error" else None,
        exception=last.exception,
    )


def _messages(chunks: Sequence[AskChunk]) -> list[tuple[ChunkType, str, Mapping[str, Any]]]:
    """(type, whole text, data of its first chunk) per message."""
    out: list[tuple[ChunkType, str, Mapping[str, Any]]] = []
    parts: list[str] = []
    data: Mapping[str, Any] = {}
    for chunk in chunks:
        if not parts:
            data = chunk.data
        parts.append(chunk.content)
        if chunk.end_of_message:
            out.append((chunk.chunk_type, "".join(parts), data))
            parts = []
    return out


def check_dialog(chunks: Sequence[AskChunk]) -> None:
    """Raise ``AssertionError`` naming the first broken invariant of the module docstring."""
    assert chunks, "a dialog has at least one chunk"
    ends = [i for i, c in enumerate(chunks) if c.end_of_dialog]
    assert ends == [len(chunks) - 1], f"end_of_dialog must be on the last chunk only, found at {ends}"
    last = chunks[-1]
    assert last.end_of_message, "the last chunk ends its message"
    assert last.usage is not None and last.latency_ms is not None, "the last chunk carries usage and latency"
    errors = [i for i, c in enumerate(chunks) if c.chunk_type == "error"]
    assert errors in ([], [len(chunks) - 1]), f"an error is the final chunk, found at {errors}"
    for before, after in itertools.pairwise(chunks):
        if before.chunk_type != after.chunk_type:
            assert before.end_of_message, f"a {before.chunk_type} message was not ended before {after}"
