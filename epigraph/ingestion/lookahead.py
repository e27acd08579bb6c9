"""Episodes in flight: up to ``IngestOptions.in_flight`` episodes of one group run ahead, committed in order.

A group's episodes are committed one after another (``runner``: its lock, in its order), and most of an
episode's time is its model calls. So while one episode is committed, the next ``in_flight - 1`` of its
group are *run ahead* (:meth:`Lookahead.ahead`): each stored ``pending`` (in order, so each one's
previous-episodes window is the one it has at its commit), claimed (``claims``: the claim renewed from
then on and handed to its commit, so no other process runs it meanwhile), then run by the algorithm
(``pipeline.episode.ingest_episode``) against the graph as it is, with every model reply and embedding
it asked for kept, by request (:class:`Replies`). What it computed is thrown away: nothing of it is
written, it emits nothing.

Its commit is the episode's ordinary run, in its turn, against the graph its predecessors left: the
names matched again (exact, alias, candidates), the contradiction candidates read again, every decision
taken again. Its model and embedder are first asked whether the run ahead asked exactly the same
(:class:`Replaying`: the same messages and parameters): then that reply (or the call still in flight)
is used, else the call is made now. The algorithm is deterministic given the graph and the replies, so
the graph is the one of one episode at a time; what the run ahead saves is the calls whose requests do
not depend on the predecessors: the extraction calls (their inputs are the message, its window of
earlier messages and the declared types) and the embeddings before the resolve call. A run ahead makes
only those (``AHEAD``) and stops at the resolve call, which reads the graph: its candidates and names
are those the commit finds, so it is made at commit. A reply its reader closed early (a runaway stopped
at its repeat, ``prompts.runtime``) is replayed as far as it was read: the same reader stops at the same
chunk, so a runaway costs one call, not two. A call ahead the commit did not ask again (a reply that
failed or was cancelled ahead, or asked otherwise) is counted in the report as unused
(``IngestReport.calls_ahead_unused``, its tokens in the totals).

Once its commit begins, a run ahead makes no new call (what it has in flight may still be used) and is
cancelled when the commit ends. Killed (kill -9), nothing of a run ahead was written: its episodes are
``pending`` and their claims lapse (``claims.CLAIM_SECONDS``), to be run by the next process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import tracing
from ..embed import Embedder
from ..errors import EpisodeConflict
from ..graph.model import Episode, utc_now
from ..graph.store import IngestStore
from ..pipeline.episode import ingest_episode
from ..pipeline.metering import CallRecord, MeteredEmbedder, MeteredLLM, ReportBuilder
from ..pipeline.options import IngestOptions
from ..pipeline.state import EpisodeRun
from ..prompts import extract_combined as cp
from ..prompts import extract_entities as ep
from ..prompts import extract_facts as fp
from ..prompts.protocol import LLM, ChatRequest, Completion, StreamChunk
from .claims import Leases, renewing
from .pending import save_pending

log = logging.getLogger("epigraph.ingest")


AHEAD = frozenset({ep.PROMPT.name, fp.PROMPT.name, cp.PROMPT.name})
"""The calls a run ahead makes: the extraction prompts, whose input is the message, its window of earlier
messages and the declared types, never the graph, so their replies are always used at commit. It stops
at the first other call (resolve_episode, whose candidates and names read the graph: made ahead, it was
asked again at commit for most messages of a conversation, ``python -m bench window``; a summary in
``episode`` summary mode), after the embeddings before it (names, facts), which are used too."""


class Superseded(Exception):
    """A run ahead asked for a call it does not make (its episode's commit began, or one that reads the
    graph: ``AHEAD``): it stops there."""


def request_key(request: ChatRequest) -> str:
    """What makes two requests the same: everything sent, and the prompt's input (scripted doubles answer
    by it)."""
    sent = {
        "messages": request.messages,
        "prompt": request.prompt_name,
        "variables": request.variables,
        "type": request.response_type,
        "schema": request.json_schema,
        "max_tokens": request.max_tokens,
        "grammar": request.grammar,
        "small": request.small,
        "temperature": request.temperature,
        "reask": request.reask,
    }
    return json.dumps(sent, sort_keys=True, default=str)


@dataclass
class _Call:
    """One call of a run ahead: its reply once it ended whole or its reader closed it (None while in
    flight, or if it failed or was cancelled), what it cost, and whether the commit used it."""

    ended: asyncio.Future[list[StreamChunk] | Completion | None]
    record: CallRecord | None = None
    used: bool = False


@dataclass
class Replies:
    """What one episode's run ahead asked the model and the embedder, by request, each reply usable once
    by its commit (two equal requests, two replies)."""

    calls: dict[str, list[_Call]] = field(default_factory=dict)
    vectors: dict[tuple[str, ...], list[asyncio.Future[np.ndarray | None]]] = field(default_factory=dict)
    closed: bool = False
    """The commit began: no new call ahead."""

    def begin(self, key: str, prompt: str) -> _Call:
        if self.closed:
            raise Superseded("the episode's commit began")
        if prompt not in AHEAD:
            raise Superseded(f"{prompt} reads the graph: asked at commit")
        call = _Call(asyncio.get_running_loop().create_future())
        self.calls.setdefault(key, []).append(call)
        return call

    def take(self, key: str) -> _Call | None:
        """The first call ahead of this request the commit has not used yet."""
        return next((c for c in self.calls.get(key, ()) if not c.used), None)

    def unused(self) -> list[CallRecord]:
        """What the calls ahead the commit did not use cost (those still in flight as far as they got)."""
        return [c.record for calls in self.calls.values() for c in calls if not c.used and c.record]

    def used(self) -> int:
        return sum(c.used for calls in self.calls.values() for c in calls)


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


class Recording:
    """The model and embedder of a run ahead: each call made through ``llm`` / ``embedder`` and kept in
    ``replies`` (with what it cost: a meter per call)."""

    def __init__(self, llm: LLM, embedder: Embedder, replies: Replies) -> None:
        self.inner, self.inner_embedder, self.replies = llm, embedder, replies
        self.dim, self.name = int(embedder.dim), str(getattr(embedder, "name", "embedder"))
        self.requests = 0

    async def complete(self, request: ChatRequest) -> Completion:
        call = self.replies.begin(request_key(request), request.prompt_name)
        meter = MeteredLLM(self.inner)
        try:
            completion = await meter.complete(request)
        except BaseException:
            _settle(call.ended, None)
            raise
        finally:
            call.record = meter.records[0] if meter.records else None
        _settle(call.ended, completion)
        return completion

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        call = self.replies.begin(request_key(request), request.prompt_name)
        meter = MeteredLLM(self.inner)
        chunks: list[StreamChunk] = []
        read_to_its_end = False
        stream = meter.stream(request)
        try:
            async for chunk in stream:
                chunks.append(chunk)
                try:
                    yield chunk
                except GeneratorExit:  # the reader closed it (a runaway stopped at its repeat) ...
                    task = asyncio.current_task()
                    read_to_its_end = task is None or not task.cancelling()  # ... not a cancellation
                    raise
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
            call.record = meter.records[0] if meter.records else None
            whole = bool(chunks) and chunks[-1].done and chunks[-1].error is None
            _settle(call.ended, chunks if whole or read_to_its_end else None)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        future: asyncio.Future[np.ndarray | None] = asyncio.get_running_loop().create_future()
        self.replies.vectors.setdefault(tuple(texts), []).append(future)
        self.requests += bool(texts)
        try:
            vectors: np.ndarray = await self.inner_embedder.embed(list(texts))
        except BaseException:
            _settle(future, None)
            raise
        _settle(future, vectors)
        return vectors


class Replaying:
    """The model and embedder of a commit: a request its run ahead made is answered with that reply
    (waiting for it while in flight), any other is made through ``llm`` / ``embedder``."""

    def __init__(self, llm: LLM, embedder: Embedder, replies: Replies) -> None:
        self.inner, self.inner_embedder, self.replies = llm, embedder, replies
        self.dim, self.name = int(embedder.dim), str(getattr(embedder, "name", "embedder"))
        self.requests = 0

    async def _reply(self, request: ChatRequest) -> list[StreamChunk] | Completion | None:
        call = self.replies.take(request_key(request))
        if call is None:
            return None
        call.used = True
        reply = await call.ended
        if reply is None:
            call.used = False  # it failed or was cancelled ahead: made now, and the one ahead is charged
        return reply

    async def complete(self, request: ChatRequest) -> Completion:
        reply = await self._reply(request)
        if isinstance(reply, Completion):
            return reply
        return await self.inner.complete(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        reply = await self._reply(request)
        if isinstance(reply, list):
            for chunk in reply:
                yield chunk
            return
        async for chunk in self.inner.stream(request):
            yield chunk

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        futures = self.replies.vectors.get(tuple(texts), [])
        if futures:
            vectors = await futures.pop(0)
            if vectors is not None:
                return vectors
        self.requests += bool(texts)
        result: np.ndarray = await self.inner_embedder.embed(list(texts))
        return result


@dataclass
class _Ahead:
    episode: Episode
    replies: Replies
    claim: asyncio.Task[None]
    """The claim's renewal, until the commit's own claim takes over."""
    run: asyncio.Task[None] | None = None


class Lookahead:
    """The runs ahead of one queue (its ``store``, its model as ``model()`` gives it, its embedder, its
    claims' ``leases``), by episode."""

    def __init__(
        self, store: IngestStore, model: Callable[[], LLM], embedder: Embedder, leases: Leases
    ) -> None:
        self.store, self.model, self.embedder, self.leases = store, model, embedder, leases
        self._ahead: dict[tuple[str, str], _Ahead] = {}

    async def ahead(self, current: Episode, after: Sequence[Episode], options: IngestOptions) -> None:
        """While ``current`` (stored) is committed, run ahead the first ``options.in_flight - 1`` of
        ``after`` of its group (the episodes its door runs next, in order): each stored ``pending`` (in
        order), claimed, then run. It stops at the first whose time comes before an earlier one's
        (stored early, it would enter that one's window of earlier episodes); one another live owner
        holds is skipped."""
        if options.in_flight <= 1 or options.mode == "bulk":
            return
        latest = (current.reference_time, current.created_at)
        for episode in [e for e in after if e.group_id == current.group_id][: options.in_flight - 1]:
            key = (episode.reference_time, episode.created_at)
            if key <= latest:
                return
            latest = key
            if (episode.group_id, episode.uuid) not in self._ahead:
                await self._start(episode, options)

    async def _start(self, episode: Episode, options: IngestOptions) -> None:
        """Store ``episode`` pending, claim it and start its run ahead (unless done, or held elsewhere)."""
        store, leases, group_id = self.store, self.leases, episode.group_id
        try:
            episode, done = await save_pending(store, episode)
        except EpisodeConflict:  # its id taken by other content since the door's check: refused in its turn
            return
        if done is not None:
            return
        claim = await store.claim_episode(group_id, episode.uuid, leases.owner, leases.seconds)
        if claim is None or claim.owner != leases.owner:
            return
        ahead = _Ahead(episode, Replies(), renewing(store, episode, leases))
        ahead.run = asyncio.create_task(self._run(ahead, options), name=f"ahead:{episode.uuid}")
        self._ahead[(group_id, episode.uuid)] = ahead

    async def _run(self, ahead: _Ahead, options: IngestOptions) -> None:
        recording = Recording(self.model(), self.embedder, ahead.replies)
        llm, embedder = MeteredLLM(recording), MeteredEmbedder(recording)
        episode = ahead.episode
        run = EpisodeRun(
            episode, self.store, llm, embedder, options, ReportBuilder(llm, embedder), _ignore, 0, utc_now()
        )
        attributes = {"epigraph.group_id": episode.group_id, "epigraph.episode.uuid": episode.uuid}
        with tracing.current("ingest episode ahead", attributes):
            try:
                await ingest_episode(run)
            except Superseded:
                pass
            except Exception as exc:  # its commit runs it as any other and meets the failure itself
                log.debug("episode %s run ahead failed: %s", episode.uuid, exc)

    def take(self, episode: Episode) -> Replies | None:
        """The commit of ``episode`` begins (holding its own claim): the replies of its run ahead, if it
        had one, which makes no new call from now on."""
        ahead = self._ahead.get((episode.group_id, episode.uuid))
        if ahead is None:
            return None
        ahead.replies.closed = True
        ahead.claim.cancel()  # the commit's claim renews it from now on
        return ahead.replies

    async def settle(self, episode: Episode, report: ReportBuilder | None = None) -> None:
        """The commit of ``episode`` computed its outcome (or found it no longer pending: no ``report``):
        its run ahead cancelled, the calls ahead it used and those it did not (charged to it:
        ``report.llm``'s records) counted in its report."""
        ahead = self._ahead.pop((episode.group_id, episode.uuid), None)
        if ahead is None:
            return
        await _cancel(ahead)
        if report is None:
            return
        unused = ahead.replies.unused()
        report.llm.records.extend(unused)
        report.calls_ahead = ahead.replies.used()
        report.calls_ahead_unused = len(unused)

    async def drop(self, episodes: Sequence[Episode]) -> None:
        """Give up the runs ahead of ``episodes`` not committed (a door stopped before them): cancelled,
        their claims released, their episodes left ``pending``. Every run and claim renewal is cancelled
        before the first wait, so a drop itself cancelled part-way (a lane's task cancelled in its
        ``finally``) leaves none running: their claims lapse (``claims.CLAIM_SECONDS``) instead of being
        renewed for as long as the process lives."""
        dropped = [a for e in episodes if (a := self._ahead.pop((e.group_id, e.uuid), None)) is not None]
        for ahead in dropped:
            for task in (ahead.run, ahead.claim):
                if task is not None:
                    task.cancel()
        for ahead in dropped:
            await _cancel(ahead)
            episode = ahead.episode
            with contextlib.suppress(Exception):  # a claim not released lapses by itself
                await self.store.release_episode(episode.group_id, episode.uuid, self.leases.owner)


async def _cancel(ahead: _Ahead) -> None:
    """Its tasks cancelled and waited for (``asyncio.wait``: a cancellation of the caller itself still
    reaches the caller)."""
    tasks = [t for t in (ahead.run, ahead.claim) if t is not None and not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks)


def _ignore(_: object) -> None:
    return None
