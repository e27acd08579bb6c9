"""Search benchmark: hybrid search latency at 10k/100k facts, and retrieval quality on LoCoMo.

(a) Latency: synthetic facts (384-d vectors) written in bulk, then p50/p95 of ``search()`` with the
    default hybrid fact recipe (``FACTS_HYBRID``) and with ``COMBINED`` (facts + entities + episodes),
    on the embedded store and on Neo4j (when ``EPIGRAPH_NEO4J_URI`` is set; ``make bench`` starts one).
    The query is embedded by ``HashEmbedder`` (microseconds), so the numbers are the search's own cost;
    the real model's query-embedding time is reported separately (``model.embed_query_p50_ms``).
(b) Quality: every LoCoMo turn of the given conversations is stored as an episode ("Speaker: text",
    embedded with all-MiniLM-L6-v2, written directly, no LLM). For every question of categories 1-4:
    hit@k (share of questions with an evidence turn in the top k) and recall@k (share of evidence turns
    in the top k), for BM25 alone, vectors alone, the library's hybrid recipes and a grid of fusions.

Prints a table and writes ``bench/results/search.json`` (DESIGN.md section 9). A run that skips a part
(``--no-latency``, or no ``--locomo`` files) keeps the previous file's metrics of that part (``--update``
does the same for a full run)::

    python -m bench search --locomo ../shared/datasets/locomo/26.json ../shared/datasets/locomo/30.json
    python -m bench search --locomo ../shared/datasets/locomo/*.json --no-latency   # quality only
    python -m bench search --sizes 10000 --stores embedded                          # latency only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from bench.performance.store import DIM, FIRST, PLACES, RELATIONS, TOPICS, VERBS, make_entities, make_episodes
from bench.shared.paths import RESULTS
from bench.shared.results import write_results
from bench.shared.stores import open_store as open_bench_store
from epigraph.graph.embedded.schema import TOKENIZER
from epigraph.graph.model import Episode, EpisodeStatus, episode_uuid
from epigraph.graph.store import GraphStore
from epigraph.search import config as recipes
from epigraph.search import search
from epigraph.search.config import Fusion, ScopeConfig, SearchConfig
from epigraph.search.fusion import Normalization
from epigraph.testing import HashEmbedder

CATEGORIES = (1, 2, 3, 4)


# --- stores ------------------------------------------------------------------------------------------


async def open_store(name: str, tmp: str, tag: str) -> GraphStore:
    return await open_bench_store(name, os.path.join(tmp, f"search-{tag}.db"), DIM)


# --- (a) latency -------------------------------------------------------------------------------------


def percentiles(values: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


async def latency(name: str, store: GraphStore, size: int, queries: int) -> dict[str, float]:
    rng = np.random.default_rng(size)
    group = f"sbench-{size}-{int(time.time())}"
    entities = make_entities(group, max(50, size // 5), rng)
    t0 = time.perf_counter()
    for write in make_episodes(group, entities, size, 1_000, rng):
        await store.write_episode(write)
    print(f"  {name} {size:>7} facts written in {time.perf_counter() - t0:.1f} s", flush=True)
    embedder = HashEmbedder(dim=DIM)
    words = [*PLACES, *TOPICS, *FIRST]
    texts = [
        f"{words[i % len(words)]} {VERBS[RELATIONS[i % 6]]} {words[(7 * i) % len(words)]}"
        for i in range(queries)
    ]
    out: dict[str, float] = {}
    prefix = f"{name}.{size // 1000}k."
    for label, cfg in (("hybrid", recipes.FACTS_HYBRID), ("combined", recipes.COMBINED)):
        for text in texts[:10]:  # warm caches and indexes
            await search(store, embedder, text, group_ids=[group], config=cfg)
        times = []
        for text in texts:
            started = time.perf_counter()
            await search(store, embedder, text, group_ids=[group], config=cfg)
            times.append((time.perf_counter() - started) * 1000)
        p50, p95 = percentiles(times)
        out[prefix + f"{label}_p50_ms"], out[prefix + f"{label}_p95_ms"] = p50, p95
        print(f"  {name} {size:>7} {label:9s} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms", flush=True)
    return out


# --- (b) LoCoMo --------------------------------------------------------------------------------------


def locomo_turns(path: Path) -> tuple[list[tuple[str, str, datetime]], list[dict[str, object]]]:
    """(dia_id, "Speaker: text", reference time) per turn, and the questions of categories 1-4."""
    data = json.loads(path.read_text(encoding="utf-8"))
    turns = []
    n = 1
    while f"session_{n}" in data:
        when = datetime.strptime(data[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
        for i, turn in enumerate(data[f"session_{n}"]):
            turns.append((turn["dia_id"], f"{turn['speaker']}: {turn['text']}", when + timedelta(seconds=i)))
        n += 1
    questions = [q for q in data["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
    return turns, questions


class CachedEmbedder:
    """The real embedder with the questions embedded up front in one batch (each search still makes its
    one ``embed`` call; this only keeps the model out of the timing of 20 recipes x 300 questions)."""

    def __init__(self, inner: object, cache: dict[str, np.ndarray]) -> None:
        self.inner, self.cache = inner, cache
        self.dim, self.name, self.requests = DIM, "cached", 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.requests += 1
        missing = [t for t in texts if t not in self.cache]
        if missing:
            for text, vec in zip(missing, await self.inner.embed(missing), strict=True):  # type: ignore[attr-defined]
                self.cache[text] = vec
        return np.stack([self.cache[t] for t in texts])


def episode_recipes() -> dict[str, SearchConfig]:
    """The library's episode recipes plus a grid of fusions (every one reported)."""
    grid: dict[str, SearchConfig] = {
        "bm25": recipes.EPISODES_BM25,
        "vector": recipes.EPISODES_VECTOR,
        "default": recipes.DEFAULT.with_scope("episodes", recipes.DEFAULT.episodes)
        .with_scope("facts", None)
        .with_scope("entities", None),
        "episodes_hybrid": recipes.EPISODES_HYBRID,
        "episodes_hybrid_rrf": recipes.EPISODES_HYBRID_RRF,
        "episodes_hybrid_score": recipes.EPISODES_HYBRID_SCORE,
        "episodes_hybrid_rrf_k60": recipes.EPISODES_HYBRID_RRF_K60,
        "episodes_hybrid_mmr": recipes.EPISODES_HYBRID_MMR,
    }
    base = ScopeConfig()
    for k in (1, 3, 5, 10, 20):
        grid[f"rrf_k{k}"] = SearchConfig(episodes=replace(base, fusion=Fusion.RRF, rrf_k=float(k)))
    for w in (40, 60):  # weighted RRF: BM25 gets NN% of the weight
        rrf = replace(base, fusion=Fusion.RRF, rrf_k=5.0, weights=(w / 100, 1 - w / 100))
        grid[f"rrf_k5_w{w}"] = SearchConfig(episodes=rrf)
    for method, weights in (
        (Normalization.MINMAX, (30, 40, 50, 60, 70)),
        (Normalization.ZSCORE, (40, 50, 60)),
        (Normalization.DBSF, (50, 60)),
        (Normalization.MAX, (30, 40, 50)),
    ):
        for w in weights:
            scope = replace(base, fusion=Fusion.SCORE, normalization=method, weights=(w / 100, 1 - w / 100))
            grid[f"{method.value}_w{w}"] = SearchConfig(episodes=scope)
    for pool in (20, 50, 100):
        grid[f"default_pool{pool}"] = SearchConfig(
            episodes=replace(recipes.DEFAULT.episodes or base, candidates=pool)
        )
    # the default's steps, each measured alone, and its neighbours (the same rule with other constants)
    context = recipes.DEFAULT.episodes or base
    grid["steps_fusion"] = SearchConfig(episodes=replace(context, context_window=0, speaker_weight=1.0))
    grid["steps_neighbours"] = SearchConfig(episodes=replace(context, speaker_weight=1.0))
    grid["steps_speakers"] = SearchConfig(episodes=replace(context, context_window=0))
    for window in (1, 3):
        grid[f"context_w{window}"] = SearchConfig(episodes=replace(context, context_window=window))
    for discount in (0.3, 0.7):
        grid[f"context_d{round(discount * 10):02d}"] = SearchConfig(
            episodes=replace(context, context_discount=discount)
        )
    for factor in (1.5, 3.0, 10.0):
        grid[f"speaker_x{factor:g}"] = SearchConfig(episodes=replace(context, speaker_weight=factor))
    grid["context_no_sessions"] = SearchConfig(episodes=replace(context, session_gap=timedelta.max))
    return {name: cfg.with_limit(10).with_name(name) for name, cfg in grid.items()}


async def store_conversation(
    store: GraphStore, embedder: object, group: str, path: Path
) -> tuple[dict[str, str], list]:
    turns, questions = locomo_turns(path)
    vectors = await embedder.embed([text for _, text, _ in turns])  # type: ignore[attr-defined]
    dia_of: dict[str, str] = {}
    for (dia_id, text, when), vec in zip(turns, vectors, strict=True):
        episode = Episode(
            # a fixed id per turn: ties in a ranking break by uuid, so random ids would let a run's
            # hit@5 wander by a few questions between identical runs (observed: 0.636 vs 0.649)
            uuid=episode_uuid(group, "", when, given_id=f"locomo:{path.stem}:{dia_id}"),
            group_id=group,
            name=dia_id,
            content=text,
            reference_time=when,
            source_description=f"locomo {path.name}",
            status=EpisodeStatus.DONE,
            content_embedding=[float(x) for x in vec],
        )
        await store.save_episode(episode)
        dia_of[episode.uuid] = dia_id
    return dia_of, questions


async def locomo(store: GraphStore, paths: list[Path]) -> tuple[dict[str, float], list[str]]:
    from epigraph.embed import SentenceTransformerEmbedder

    model = SentenceTransformerEmbedder()
    started = time.perf_counter()
    cases: list[tuple[str, str, set[str], int, dict[str, str]]] = []
    for path in paths:
        group = f"locomo-{path.stem}"
        dia_of, questions = await store_conversation(store, model, group, path)
        for q in questions:
            evidence = {str(e) for e in q["evidence"]}  # type: ignore[attr-defined]
            cases.append((group, str(q["question"]), evidence, int(q["category"]), dia_of))  # type: ignore[call-overload]
    elapsed = time.perf_counter() - started
    print(f"  stored {len(paths)} conversations in {elapsed:.1f} s; {len(cases)} questions")
    metrics: dict[str, float] = {"locomo.questions": len(cases), **await model_latency(model)}
    cache = dict(zip([c[1] for c in cases], await model.embed([c[1] for c in cases]), strict=True))
    embedder = CachedEmbedder(model, cache)
    for name, cfg in episode_recipes().items():
        hits = {5: 0.0, 10: 0.0}
        recall = {5: 0.0, 10: 0.0}
        per_category: dict[int, list[int]] = {}
        per_conversation: dict[str, list[int]] = {}
        for group, question, evidence, category, dia_of in cases:
            results = await search(store, embedder, question, group_ids=[group], config=cfg)
            ranked = [dia_of.get(r.uuid, "") for r in results.episodes]
            for k in (5, 10):
                found = evidence & set(ranked[:k])
                hits[k] += bool(found)
                recall[k] += len(found) / len(evidence)
            hit10 = int(bool(evidence & set(ranked[:10])))
            per_category.setdefault(category, []).append(hit10)
            per_conversation.setdefault(group.removeprefix("locomo-"), []).append(hit10)
        n = len(cases)
        for k in (5, 10):
            metrics[f"locomo.hit{k}.{name}"] = round(hits[k] / n, 4)
            metrics[f"locomo.recall{k}.{name}"] = round(recall[k] / n, 4)
        if name == "default":
            for category, values in sorted(per_category.items()):
                metrics[f"locomo.hit10.default.category{category}"] = round(sum(values) / len(values), 4)
        for conversation, values in per_conversation.items():  # a change must help each, not one
            metrics[f"locomo.hit10.{name}.conversation{conversation}"] = round(sum(values) / len(values), 4)
        each = "  ".join(f"{c} {sum(v) / len(v):.3f}" for c, v in per_conversation.items())
        print(
            f"  {name:26s} hit@5 {hits[5] / n:.3f}  hit@10 {hits[10] / n:.3f}  recall@10 {recall[10] / n:.3f}"
            f"  (hit@10 {each})"
        )
    notes = [
        f"locomo: {', '.join(p.name for p in paths)}; {len(cases)} questions of categories 1-4; "
        "turn = 'Speaker: text'; all-MiniLM-L6-v2; episodes written directly (no LLM); top 10 episodes; "
        f"embedded store, FTS5 tokenizer '{TOKENIZER}'",
        "recipes: bm25 = EPISODES_BM25, vector = EPISODES_VECTOR, default = the episode scope of the default "
        "search recipe (RRF k=5 of BM25 and vectors, then session neighbours, then speakers); <norm>_wNN = "
        "score fusion, BM25 weight NN%, after <norm> normalization; rrf_kN = RRF with k=N (30 candidates); "
        "rrf_k5_wNN = RRF k=5 with BM25 weight NN% (the fusion grid has no neighbours or speakers); "
        "default_poolN = the default with N candidates per retriever; steps_fusion / steps_neighbours / "
        "steps_speakers = the default's fusion alone, + neighbours, + speakers alone; context_wN = N turns "
        "each side; context_dNN = discount 0.NN; speaker_xF = speaker factor F; context_no_sessions = "
        "neighbours across session boundaries",
    ]
    return metrics, notes


async def model_latency(model: object) -> dict[str, float]:
    times = []
    for i in range(30):
        started = time.perf_counter()
        await model.embed([f"what did Caroline do on day {i}?"])  # type: ignore[attr-defined]
        times.append((time.perf_counter() - started) * 1000)
    p50, p95 = percentiles(times[5:])
    return {"model.embed_query_p50_ms": p50, "model.embed_query_p95_ms": p95}


def previous(results_dir: Path | None) -> tuple[dict[str, float], list[str]]:
    path = (results_dir or RESULTS) / "search.json"
    if not path.exists():
        return {}, []
    data = json.loads(path.read_text(encoding="utf-8"))
    when = data.get("when", "?")
    kept = [n if n.startswith("(kept") else f"(kept from {when}) {n}" for n in data.get("notes", [])]
    return dict(data.get("metrics", {})), kept


# --- main --------------------------------------------------------------------------------------------


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--locomo", type=Path, nargs="*", default=[], help="LoCoMo conversation files")
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument(
        "--no-latency", action="store_true", help="skip the latency part (same as an empty --sizes)"
    )
    parser.add_argument("--stores", nargs="+", default=["embedded", "neo4j"])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--results-dir", type=Path, default=None, help="default: bench/results")
    parser.add_argument(
        "--update",
        action="store_true",
        help="keep the metrics of the existing results file that this run does not measure",
    )
    args = parser.parse_args()
    sizes = [] if args.no_latency else args.sizes
    partial = not sizes or not args.locomo  # a part is skipped: keep its previous figures
    metrics, notes = previous(args.results_dir) if args.update or partial else ({}, [])
    if args.locomo:  # re-measured now: the previous run's LoCoMo notes no longer apply
        notes = [n for n in notes if not n.split(") ", 1)[-1].startswith(("locomo", "recipes:"))]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.stores:
            if name == "neo4j" and sizes and not os.environ.get("EPIGRAPH_NEO4J_URI"):
                notes.append("neo4j skipped: EPIGRAPH_NEO4J_URI not set (make bench starts a server)")
                continue
            for size in sizes:
                store = await open_store(name, tmp, f"{size}")
                try:
                    metrics.update(await latency(name, store, size, args.queries))
                finally:
                    await store.close()
        if args.locomo:
            store = await open_store("embedded", tmp, "locomo")
            try:
                found, locomo_notes = await locomo(store, args.locomo)
            finally:
                await store.close()
            metrics.update(found)
            notes += locomo_notes
    if sizes:
        notes.append(
            f"latency: search() over {args.queries} queries after 10 warm-up queries; facts written in bulk "
            "(1,000 per write); query embedded by HashEmbedder (see model.embed_query_* for the real model)"
        )
    for key, value in metrics.items():
        print(f"{key:48s} {value:10.4f}")
    fresh = {n for n in notes if not n.startswith("(kept")}
    notes = [n for n in dict.fromkeys(notes) if not (n.startswith("(kept") and n.split(") ", 1)[-1] in fresh)]
    print("wrote", write_results("search", metrics, notes, results_dir=args.results_dir))


if __name__ == "__main__":
    asyncio.run(main())
