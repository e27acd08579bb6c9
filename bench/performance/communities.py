"""Communities bench: what communities and conversation summaries cost to build and update.

Communities and conversation summaries on the LoCoMo 26 gold graph: what they cost to build, and to
update after one more episode.

The gold graph is built as the ingest bench builds it (``gold.GoldScript``: every pipeline prompt
answered from the hand-made gold annotations of ``bench/data/locomo26_s1-3.json``; combined mode), from
all turns but the last, every turn from the source ``locomo:26`` (one conversation). Then, with the
overview prompts answered by a scripted model (``epigraph.testing.overview``: a community named after
its two best connected members and summarized with their summaries' first sentences; a conversation's
summary extended with each new message's first words), each reply after a fixed latency (``--latency``,
as the ingest bench), it measures:

- ``<store>.build.*``: the first full build of the communities (Louvain over the current facts, one
  ``summarize_communities`` call per 8 communities, one embedding request);
- ``<store>.conversation.build.*``: the conversation's first summary (57 episodes folded, 1,500 tokens of
  new text per call);
- then the last turn is ingested and ``<store>.update.*`` / ``<store>.conversation.update.*`` measure
  the incremental updates after that one episode; ``<store>.unchanged.*`` an update with nothing new.

Per step: ``calls``, ``input_tokens``, ``output_tokens``, ``embedding_requests``, ``seconds`` (wall,
scripted latency included), and for communities ``communities``, ``summarized``, ``kept``,
``members_share`` (entities of the graph in a community). Prints the communities with their summaries
and writes ``bench/results/communities.json``::

    python -m bench communities --conversation ../shared/datasets/locomo \
        --gold bench/data/locomo26_s1-3.json [--stores embedded,neo4j] [--embedder hash]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.performance.ingest import make_embedder
from bench.shared.gold import GoldScript, GoldSet, load_sets
from bench.shared.paths import DATA
from bench.shared.results import write_results
from bench.shared.stores import open_store
from epigraph.embed import Embedder
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.model import to_utc
from epigraph.graph.store import GraphStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.overview import Communities, CommunityUpdate, Conversations, ConversationUpdate, OverviewOptions
from epigraph.pipeline.options import IngestOptions
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import ScriptedLLM, ScriptedReply
from epigraph.testing.overview import OVERVIEW_SCRIPT

SOURCE = "locomo:26"


def overview_llm(latency: float) -> ScriptedLLM:
    """The scripted overview model, each reply after ``latency`` seconds."""

    def answer(request: ChatRequest) -> ScriptedReply:
        return ScriptedReply(OVERVIEW_SCRIPT[request.prompt_name](request), delay_s=latency)

    return ScriptedLLM(answer)


def inputs(gold_set: GoldSet, group: str) -> list[EpisodeInput]:
    return [
        EpisodeInput(content=t.text, speaker=t.speaker, reference_time=to_utc(t.reference_time),
                     group_id=group, source_description=SOURCE)
        for t in gold_set.turns
    ]  # fmt: skip


def cost(report: Any, seconds: float) -> dict[str, float]:
    return {
        "calls": report.llm_calls, "input_tokens": report.input_tokens, "output_tokens": report.output_tokens,
        "embedding_requests": report.embedding_requests, "seconds": round(seconds, 3),
    }  # fmt: skip


async def community_step(
    communities: Communities, group: str, entities: int, rebuild: bool
) -> dict[str, float]:
    update: CommunityUpdate = await communities.update(group, rebuild=rebuild)
    members = sum(len(c.members) for c in update.communities)
    return {
        **cost(update.report, update.seconds), "communities": len(update.communities),
        "summarized": update.summarized, "kept": update.kept, "rebuilt": int(update.rebuilt),
        "members_share": round(members / max(1, entities), 3),
    }  # fmt: skip


async def conversation_step(conversations: Conversations, group: str) -> dict[str, float]:
    started = time.perf_counter()
    update: ConversationUpdate = await conversations.update(group, SOURCE)
    return {**cost(update.report, time.perf_counter() - started), "folded": update.folded}


async def run_store(
    kind: str, gold_set: GoldSet, embedder: Embedder, latency: float, folder: Path
) -> tuple[dict[str, float], list[str]]:
    store: GraphStore = await open_store(kind, str(folder / f"{kind}.db"), embedder.dim)
    group = f"locomo26-{uuid.uuid4().hex[:8]}"
    try:
        items = inputs(gold_set, group)
        ingestor = Ingestor(store, ScriptedLLM(GoldScript(gold_set.gold, gold_set.turns, 0.0, 0.0)), embedder,
                            IngestOptions(mode="combined"))  # fmt: skip
        done = await ingestor.add_episodes(items[:-1])
        assert all(r.ok for r in done), [r.error for r in done if not r.ok]
        llm = overview_llm(latency)
        options = OverviewOptions()
        communities = Communities(store, llm, embedder, options)
        conversations = Conversations(store, llm, embedder, options)
        metrics: dict[str, float] = {}
        stats = await store.stats(group)
        metrics.update({"graph.entities": stats.entities, "graph.current_facts": stats.current_facts,
                        "graph.episodes": stats.episodes})  # fmt: skip
        steps = {"build": await community_step(communities, group, stats.entities, rebuild=True)}
        shown = await communities.view(group)
        steps["conversation.build"] = await conversation_step(conversations, group)
        (last,) = await ingestor.add_episodes(items[-1:])
        assert last.ok, last.error
        entities = (await store.stats(group)).entities
        steps["update"] = await community_step(communities, group, entities, rebuild=False)
        steps["conversation.update"] = await conversation_step(conversations, group)
        steps["unchanged"] = await community_step(communities, group, entities, rebuild=False)
        for step, values in steps.items():
            metrics.update({f"{step}.{k}": v for k, v in values.items()})
        lines = [f"{v.size:>3}  {v.community.name}: {v.community.summary}" for v in shown]
        summary = (await store.conversation_summaries(group, [SOURCE]))[0].summary
        lines.append(f"conversation {SOURCE}: {summary[:300]}")
        return {f"{kind}.{k}": v for k, v in metrics.items()}, lines
    finally:
        await store.close()


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", type=Path, required=True, help="LoCoMo folder or 26.json")
    parser.add_argument("--gold", type=Path, default=DATA / "locomo26_s1-3.json")
    parser.add_argument("--stores", default="embedded", help="comma-separated: embedded, neo4j")
    parser.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per scripted model reply")
    parser.add_argument("--results-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    (gold_set,) = load_sets([args.gold], [args.conversation])
    embedder = make_embedder(args.embedder)
    metrics: dict[str, float] = {"machine.load_average_1m": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as folder:
        for kind in [s.strip() for s in args.stores.split(",") if s.strip()]:
            measured, lines = await run_store(kind, gold_set, embedder, args.latency, Path(folder))
            metrics.update(measured)
            print(f"\n{kind}: communities of the LoCoMo 26 gold graph (members, name: summary)")
            print("\n".join(lines))
    print()
    for key in sorted(metrics):
        print(f"{key:52} {metrics[key]:>10}")
    embedder_name = "all-MiniLM-L6-v2" if args.embedder == "minilm" else "HashEmbedder"
    notes = [
        f"graph: LoCoMo 26 sessions 1-3 ({len(gold_set.turns)} turns), built by the ingest bench's "
        "GoldScript (scripted gold answers, combined mode), the last turn held back for the update steps; "
        f"every turn from the source {SOURCE!r} (one conversation); embedder {embedder_name}",
        "model: scripted (epigraph.testing.overview), never a real model: communities named after their two "
        "best connected members, summaries from their members' summaries; each reply after "
        f"{args.latency * 1000:.0f} ms, included in seconds",
        "build: Louvain over the current facts (networkx), one summarize_communities call per 8 communities; "
        "update: after one more episode, only communities whose members changed are summarized again",
        "conversation: 1,500 tokens of new episode text per summarize_conversation call",
        "seconds: wall time on this shared 2-core machine (machine.load_average_1m: its load at the start); "
        "Neo4j's include planning each statement the first time",
    ]
    print(f"wrote {write_results('communities', metrics, notes, results_dir=args.results_dir, merge=True)}")


if __name__ == "__main__":
    asyncio.run(main())
