"""What the HTTP routes and the MCP tools both do, as plain async functions over a ``ServerState``:
one behaviour, two transports. Groups are already authorized by the caller."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing, asynccontextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..ask import AskChunk
from ..client import KnowledgeGraph
from ..errors import EpigraphError
from ..explore.gather import AROUND
from ..facade.forgetting import retention_pass
from ..facade.group import GroupHandle
from ..facade.group import reveal as reveal_text
from ..graph.model import Episode, EpisodeStatus
from ..graph.roles import optional
from ..graph.store_roles import Retention
from ..present.records import episode_dict
from ..search import (
    COMBINED,
    COMMUNITIES_HYBRID,
    ENTITIES_HYBRID,
    EPISODES_HYBRID,
    FACTS_HYBRID,
    SearchConfig,
    recipe,
)
from ..tokens import aload_encoding
from .auth import Keys
from .intake import Intake
from .schemas import Accepted, AcceptedEpisode, AskIn, EpisodeIn, LimitExceeded, Limits, checked_inputs

log = logging.getLogger("epigraph.serve")

_SCOPES: dict[str, SearchConfig] = {
    "all": COMBINED, "facts": FACTS_HYBRID, "entities": ENTITIES_HYBRID, "episodes": EPISODES_HYBRID,
    "communities": COMMUNITIES_HYBRID,
}  # fmt: skip


class ServerStopping(Exception):
    """The server was told to stop while a request or stream was open (503; a stream's last event)."""


@dataclass
class ServerState:
    """What the routes and tools use: the graph, the keys, the limits and the intake into the queue."""

    kg: KnowledgeGraph
    keys: Keys
    limits: Limits
    intake: Intake
    ready: bool = False
    publish: bool = False
    """Adds go to Kafka (``kg.enqueue``: ``epigraph worker`` processes ingest them), not to ``intake``."""
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the process is told to stop (``epigraph serve``'s signal handler): open event streams
    end at once, before uvicorn's graceful-shutdown wait would cancel them."""


@asynccontextmanager
async def running(state: ServerState, *, close_graph: bool = True) -> AsyncIterator[ServerState]:
    """Open the graph and resume every group's pending episodes; at the end stop the background runs (an
    interrupted episode stays ``pending``, resumed at the next start) and close the graph."""
    await state.kg.open()
    passes = asyncio.create_task(retention_passes(state), name="retention")
    await aload_encoding()  # ingestion counts tokens: load the BPE tables now, not on the event loop later
    # What start-up built lives as long as the server: out of the collector's sight, a full collection
    # under load scans only what requests made (such pauses: docs/decisions/2026-11-25-serve.md).
    gc.freeze()
    try:
        resumed = await state.intake.resume()
        if resumed:
            log.info("resuming the pending episodes of %d group(s)", len(resumed))
        state.ready = True
        yield state
    finally:
        state.ready = False
        passes.cancel()
        with suppress(asyncio.CancelledError):
            await passes
        await state.intake.close()
        if close_graph:
            await state.kg.close()
        # back in the collector's sight: frozen objects are never freed, and at exit nanobind modules
        # (triton's, imported with the embedding model) report theirs as leaks, ~100 lines on stderr
        gc.unfreeze()


async def retention_passes(state: ServerState) -> None:
    """Every group's retention policy applied now, then every ``retention_every`` seconds, until
    cancelled (nothing with ``retention_every`` 0 or a store without the retention role). A pass that
    fails is logged, never raised: the next one tries again."""
    every = state.kg.settings.retention_every
    if every <= 0 or optional(state.kg.store, Retention) is None:
        return
    while True:
        try:
            done = [r for r in await retention_pass(state.kg) if r.applied]
            if done:
                episodes = sum(r.counts.get("episodes_deleted", 0) for r in done)
                log.info("retention: %d episodes forgotten in %d group(s)", episodes, len(done))
        except EpigraphError as exc:
            log.warning("a retention pass failed (%s); the next one tries again", type(exc).__name__)
        await asyncio.sleep(every)


def episode_body(episode: Episode) -> dict[str, Any]:
    """An episode with its status, error and ingestion report (never its embedding)."""
    return episode_dict(episode, report=True)


async def add(state: ServerState, group_id: str, episodes: list[EpisodeIn]) -> Accepted:
    """Store the episodes ``pending`` (within the limits) and queue them; returns their ids. A server
    that publishes hands them to Kafka instead (status ``queued``, once Kafka acknowledged them)."""
    inputs = checked_inputs(group_id, episodes, state.limits)
    if state.publish:
        queued = [AcceptedEpisode(uuid=p.uuid, status="queued") for p in await state.kg.enqueue(inputs)]
        return Accepted(group_id=group_id, episodes=queued)
    return Accepted.of(group_id, await state.intake.accept(group_id, inputs))


def group(state: ServerState, group_id: str) -> GroupHandle:
    """The graph's handle of an (authorized) group: the one way from here to the graph."""
    return state.kg.group(group_id)


async def episode(state: ServerState, group_id: str, uuid: str) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        return episode_body(await group(state, group_id).episodes.get(uuid))


async def remove(state: ServerState, group_id: str, uuid: str) -> dict[str, Any]:
    """Delete through the queue, which waits for the group's run in flight."""
    chosen = group(state, group_id)
    await chosen.episodes.get(uuid)  # EpisodeNotFound (404) before the queue waits for anything
    result = await chosen.remove_episode(uuid)
    state.intake.removed(group_id, uuid)
    return {"episode": uuid, **asdict(result.deletion), "refreshed": [e.uuid for e in result.entities]}


async def retry_failed(state: ServerState, group_id: str) -> Accepted:
    """Set the group's failed episodes pending again, in their order; the queue runs them."""
    return Accepted.of(group_id, await state.intake.retry_failed(group_id))


def events(state: ServerState, group_id: str) -> AsyncGenerator[dict[str, Any], None]:
    """The group's progress events as they happen (see ``Intake.events``)."""
    return state.intake.events(group_id)


async def episodes(
    state: ServerState,
    group_id: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    status: EpisodeStatus | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        found = await group(state, group_id).episodes(since=since, until=until, status=status, limit=limit)
    return {"group_id": group_id, "episodes": [episode_body(e) for e in found]}


async def changes(
    state: ServerState,
    group_id: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    kinds: Sequence[str] | None = None,
    limit: int = 1000,
) -> dict[str, Any]:
    """What changed in ``[since, until)``, grouped by entity (``GroupHandle.changes``)."""
    async with state.intake.priority.foreground():
        listing = await group(state, group_id).changes(since, until, kinds=kinds, limit=limit)
    return listing.to_dict()


async def stats(state: ServerState, group_id: str) -> dict[str, Any]:
    """The group's counts, and how many of its episodes are pending and failed."""
    async with state.intake.priority.foreground():
        chosen = group(state, group_id)
        counts = asdict(await chosen.stats())
        for status in (EpisodeStatus.PENDING, EpisodeStatus.FAILED):
            found = await chosen.episodes(status=status, limit=None)
            counts[f"{status.value}_episodes"] = len(found)
    if state.kg.webhooks is not None:  # the server's, across groups (also at /metrics)
        counts["webhook_dead_letters"] = state.kg.webhooks.stats.dead_letters
    return {"group_id": group_id, **counts}


async def reveal(state: ServerState, group_id: str, text: str) -> dict[str, Any]:
    """``text`` with the group's placeholders replaced by the originals its vault keeps sealed, opened
    with the server's key (``EPIGRAPH_REDACT_KEY``; never taken from a request, never logged)."""
    async with state.intake.priority.foreground():
        return {"group_id": group_id, "text": await reveal_text(group(state, group_id), text)}


async def search(
    state: ServerState,
    group_id: str,
    query: str,
    *,
    scope: str = "all",
    recipe_name: str | None = None,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    include_retired: bool = False,
    limit: int = 10,
) -> dict[str, Any]:
    config = recipe(recipe_name) if recipe_name else _SCOPES[scope]
    async with state.intake.priority.foreground():
        results = await group(state, group_id).search(
            query, config=config, as_of=as_of, known_at=known_at,
            include_retired=include_retired, limit=max(1, min(limit, state.limits.max_results)),
        )  # fmt: skip
    return results.to_dict()


async def entity(
    state: ServerState, group_id: str, name: str, *, as_of: datetime | None = None
) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        view = await group(state, group_id).entity(name, as_of=as_of)
    return view.to_dict()


async def explain(
    state: ServerState, group_id: str, subject: str, kind: Literal["fact", "entity"] | None = None
) -> dict[str, Any]:
    """Why the group holds a fact or an entity (``GroupHandle.explain``), as a read someone waits on."""
    async with state.intake.priority.foreground():
        found = await group(state, group_id).explain(subject, kind=kind)
    return found.to_dict()


# --- asking ------------------------------------------------------------------------------------------


def _question(state: ServerState, body: AskIn) -> str:
    if len(body.question) > state.limits.max_question_chars:
        raise LimitExceeded(422, "question", f"at most {state.limits.max_question_chars} characters")
    return body.question


async def answer(state: ServerState, group_id: str, body: AskIn) -> dict[str, Any]:
    """The answer in one piece (cited facts and episodes), as a read someone waits on."""
    question = _question(state, body)
    async with state.intake.priority.foreground():
        found = await group(state, group_id).ask(
            question, streaming=False, as_of=body.as_of, known_at=body.known_at, mode=body.mode
        )
    return found.to_dict()


def ask(state: ServerState, group_id: str, body: AskIn) -> AsyncIterator[AskChunk]:
    """The dialog's chunks as they happen, as a read someone waits on."""
    chunks = group(state, group_id).ask(
        _question(state, body), streaming=True, as_of=body.as_of, known_at=body.known_at, mode=body.mode
    )
    return _in_foreground(state, chunks)


async def _in_foreground(state: ServerState, chunks: AsyncIterator[AskChunk]) -> AsyncIterator[AskChunk]:
    async with state.intake.priority.foreground(), aclosing(chunks) as dialog:  # type: ignore[type-var]
        async for chunk in dialog:
            yield chunk


# --- the interactive view's data ---------------------------------------------------------------------


def default_group(state: ServerState) -> str:
    """The group the page shows first when the address names none."""
    return state.kg.group_id


def readiness(state: ServerState) -> dict[str, bool]:
    """Whether the graph is open and pending episodes were resumed, and whether it has a model."""
    return {"ready": state.ready, "llm": state.kg.llm is not None}


async def explore_search(state: ServerState, group_id: str, query: str, *, limit: int = 20) -> dict[str, Any]:
    """What a search finds (retired facts too) and its neighbourhood, as the view's data."""
    async with state.intake.priority.foreground():
        view = await group(state, group_id).explore(query, limit=limit)
    return view.to_data()


async def explore_entity(
    state: ServerState, group_id: str, name: str, *, depth: int = 1, around: int = AROUND
) -> dict[str, Any]:
    """An entity's neighbourhood (retired facts embedded) as the view's data."""
    async with state.intake.priority.foreground():
        view = await group(state, group_id).subgraph(name, depth=depth, include_retired=True, around=around)
    return view.to_data()


async def explore_facts(state: ServerState, group_id: str, uuids: Sequence[str]) -> dict[str, Any]:
    """Just these facts and their endpoints, as the view's data."""
    async with state.intake.priority.foreground():
        view = await group(state, group_id).facts_graph(uuids)
    return view.to_data()


# --- the big picture: communities and conversations ------------------------------------------------


async def communities(
    state: ServerState, group_id: str, *, as_of: datetime | None = None, known_at: datetime | None = None
) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        views = await group(state, group_id).overview.communities(as_of=as_of, known_at=known_at)
    return {"group_id": group_id, "communities": [v.to_dict() for v in views]}


async def update_communities(state: ServerState, group_id: str, *, rebuild: bool = False) -> dict[str, Any]:
    """Update (or rebuild) the group's communities: model calls, while ingestion goes on."""
    overview = group(state, group_id).overview
    update = await (overview.build_communities() if rebuild else overview.update_communities())
    return {"group_id": group_id, "update": update.to_dict(), **await communities(state, group_id)}


async def conversations(state: ServerState, group_id: str) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        views = await group(state, group_id).overview.conversations()
    return {"group_id": group_id, "conversations": [v.to_dict() for v in views]}


async def conversation(state: ServerState, group_id: str, key: str, *, limit: int = 50) -> dict[str, Any]:
    async with state.intake.priority.foreground():
        found = await group(state, group_id).overview.conversation(key, limit=limit)
    return {"group_id": group_id, **found.to_dict()}


async def update_conversations(
    state: ServerState, group_id: str, keys: list[str] | None = None, *, rebuild: bool = False
) -> dict[str, Any]:
    """Fold new episodes into the summaries of ``keys`` (every conversation with some, when None)."""
    updates = await group(state, group_id).overview.update_conversations(keys, rebuild=rebuild)
    return {"group_id": group_id, "updates": [u.to_dict() for u in updates]}
