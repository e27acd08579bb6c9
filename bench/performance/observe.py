"""Observe bench: what tracing costs an episode, and what a window of changes costs to read.

What observability and "what changed" cost (issue 61 parts 3 and 4; the decision record
docs/decisions/2026-12-01-observability.md).

- ``tracing.*``: the same conversation ingested with tracing off and on (the OpenTelemetry SDK with an
  in-memory exporter: every span is built and exported), the model a scripted one with no latency, so
  the time measured is the pipeline's own and the spans' share of it is as large as it can be:
  ``off.episode_ms_median``, ``on.episode_ms_median``, ``overhead_ratio`` (on / off), ``spans_per_episode``;
  runs alternate, ``--rounds`` of each.
- ``changes.<store>.<n>.*``: a group of ``--facts`` facts (written directly, dated over five years of
  event time and one year of system time, one in ten retired), then ``ChangeReads.changes`` plus the
  rule (``GroupHandle.changes`` without the facade) for a narrow window (one month of event time) and a
  wide one (everything, at the 1000 limit): ``narrow_p50_ms``, ``wide_p50_ms``, ``narrow_changes``.

Writes ``bench/results/observe.json``::

    python -m bench observe [--stores embedded,neo4j] [--facts 10000] [--episodes 30] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from bench.shared.results import write_results
from bench.shared.stores import open_store
from epigraph import KnowledgeGraph, tracing
from epigraph.graph.changes import Window, what_changed
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Fact, Invalidation, Mention
from epigraph.graph.store import EpisodeWrite
from epigraph.graph.store_roles import ChangeReads
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import HashEmbedder, ScriptedLLM
from epigraph.testing.reading import asked_in

T0 = datetime(2020, 1, 1, tzinfo=UTC)
NAMES = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"]


def _answer(request: ChatRequest) -> str:
    """Two people and one fact a turn: what they say is new, their names are exact matches."""
    if request.prompt_name == "resolve_episode":
        entities, facts = asked_in({"messages": request.messages})
        return "\n".join([*(f"{e.id} new" for e in entities), *(verdict_line(f.id, [], []) for f in facts)])
    if request.prompt_name == "summarize_entities":
        return json.dumps({"summaries": []})
    content = ExtractionInput.model_validate(request.variables).content()
    a, b = [n for n in NAMES if n in content][:2]
    if request.prompt_name == "extract_entities":
        return f"{a}; {b}"
    return write_fact(f"{a} met {b}.", a, b, "MET", "")


async def _ingest(episodes: int) -> list[float]:
    """Per-episode wall times (ms) of ingesting ``episodes`` turns into a fresh in-memory graph."""
    store, llm = EmbeddedStore(":memory:"), ScriptedLLM(_answer)
    kg = KnowledgeGraph(store=store, llm=llm, embedder=HashEmbedder(dim=64))
    times = []
    async with kg:
        for i in range(episodes):
            a, b = NAMES[i % len(NAMES)], NAMES[(i + 3) % len(NAMES)]
            started = time.perf_counter()
            when = T0 + timedelta(days=i)
            result = await kg.add_episode(f"{a}: I met {b} today ({i}).", reference_time=when)
            times.append((time.perf_counter() - started) * 1000)
            assert result.ok, result.error
    return times


async def tracing_cost(episodes: int, rounds: int) -> dict[str, float]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    await _ingest(3)  # warm up: tokenizer tables, imports
    off: list[float] = []
    on: list[float] = []
    spans = 0
    for _ in range(rounds):
        tracing.disable()
        off += await _ingest(episodes)
        tracing.enable(provider)
        exporter.clear()
        on += await _ingest(episodes)
        spans = len(exporter.get_finished_spans())
        tracing.disable()
    off_ms, on_ms = statistics.median(off), statistics.median(on)
    return {
        "tracing.off.episode_ms_median": round(off_ms, 3),
        "tracing.on.episode_ms_median": round(on_ms, 3),
        "tracing.overhead_ratio": round(on_ms / off_ms, 4),
        "tracing.spans_per_episode": round(spans / episodes, 2),
    }


def _graph(group_id: str, n_facts: int) -> list[EpisodeWrite]:
    """``n_facts`` facts over 100 entities in writes of 100 facts (one episode each)."""
    rnd = random.Random(61)
    entities = [Entity(group_id=group_id, name=f"entity {i}") for i in range(100)]
    writes = []
    for e in range(max(1, n_facts // 100)):
        learned = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(hours=e * 87)
        said = T0 + timedelta(days=e * 18)
        episode = Episode(group_id=group_id, content=f"episode {e}", reference_time=said, created_at=learned,
                          status=EpisodeStatus.DONE)  # fmt: skip
        facts = []
        for i in range(100):
            source, target = rnd.sample(entities, 2)
            valid = T0 + timedelta(days=rnd.randrange(5 * 365))
            fact = Fact(
                group_id=group_id, source_uuid=source.uuid, target_uuid=target.uuid, relation="KNOWS",
                text=f"fact {e}.{i}", episodes=[episode.uuid], valid_at=valid, created_at=learned,
            )  # fmt: skip
            if i % 10 == 0:
                end = valid + timedelta(days=rnd.randrange(1, 400))
                by = Invalidation(fact_uuid=fact.uuid, episode_uuid=episode.uuid)
                retired = {"invalid_at": end, "expired_at": learned, "invalidated_by": by}
                fact = fact.model_copy(update=retired)
            facts.append(fact)
        ends = {u for f in facts for u in (f.source_uuid, f.target_uuid)}
        mentions = [Mention(group_id=group_id, episode_uuid=episode.uuid, entity_uuid=u) for u in ends]
        writes.append(EpisodeWrite(episode=episode, entities=entities if e == 0 else (), facts=facts,
                                   mentions=mentions))  # fmt: skip
    return writes


async def changes_cost(kind: str, n_facts: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(kind, str(Path(tmp) / "graph.db"), 8)
        group_id = f"observe-bench-{int(time.time())}"
        try:
            for write in _graph(group_id, n_facts):
                await store.write_episode(write)
            reads: ChangeReads = store  # type: ignore[assignment]
            timed: dict[str, list[float]] = {"narrow": [], "wide": []}
            windows = {"narrow": Window(datetime(2022, 3, 1, tzinfo=UTC), datetime(2022, 4, 1, tzinfo=UTC)),
                       "wide": Window()}  # fmt: skip
            found = 0
            for _ in range(max(5, rounds * 5)):
                for name, window in windows.items():
                    started = time.perf_counter()
                    records = await reads.changes(group_id, window, 1000)
                    changed = what_changed(records, window)
                    timed[name].append((time.perf_counter() - started) * 1000)
                    found = len(changed) if name == "narrow" else found
        finally:
            delete = getattr(store, "delete_group", None)
            if delete is not None and kind == "neo4j":
                await delete(group_id)
            await store.close()
    size = f"{n_facts // 1000}k"
    return {
        f"changes.{kind}.{size}.narrow_p50_ms": round(statistics.median(timed["narrow"]), 3),
        f"changes.{kind}.{size}.wide_p50_ms": round(statistics.median(timed["wide"]), 3),
        f"changes.{kind}.{size}.narrow_changes": float(found),
    }


async def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="embedded")
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    metrics = await tracing_cost(args.episodes, args.rounds)
    for kind in [s.strip() for s in args.stores.split(",") if s.strip()]:
        metrics.update(await changes_cost(kind, args.facts, args.rounds))
    for key, value in metrics.items():
        print(f"{key:48} {value:>12}")
    notes = [
        "tracing: a scripted model with no latency, so the pipeline's own time is all there is to compare "
        "the spans with (with a real model the spans' share is smaller still)",
        "changes: the read and the rule, no facade; narrow = one month of event time, wide = everything at "
        "the 1000 limit",
    ]
    write_results("observe", metrics, notes, merge=True)
    return metrics


if __name__ == "__main__":
    asyncio.run(main())
