"""Store benchmark: write throughput and query latency of both stores at 10k and 100k facts (or 1M).

Synthetic but realistic data: person/place/topic names, one-sentence facts, 384-d unit vectors of low
intrinsic dimension (like sentence embeddings: ``unit_vectors``). For each store and size it measures

- write throughput, batched per episode (~10 facts per ``write_episode``) and in bulk (``write_episodes``
  of 20 episodes of 1,000 facts each), over the whole bulk load and over its last 20 episodes (a fresh
  Neo4j JVM compiles its hot code early in the load: tools/neo4j/README.md "Performance");
- fulltext (BM25) and vector top-10 query latency, p50 and p95 over 200 queries, once the store is at
  rest (``settle_s``: how long Neo4j kept merging index segments after the load, at most 300 s), and
  the vector p50 of 50 queries right after the load, while those merges run;
- fulltext and vector p50 / p95 as of the middle of the history (``*_as_of_middle_*``: the two
  halves of the time-travel hybrid search below, apart);
- the vector p50 of the same 200 queries as of when only the first 200 facts had begun
  (``vector_as_of_early_p50_ms``: a filter that selective defeats an approximate index), and of what
  was known then, when only those had been recorded (``vector_known_at_early_p50_ms``);
- memory: peak RSS of this process (embedded) or the Neo4j JVM's RSS (when its pid is known:
  ``EPIGRAPH_NEO4J_PID``, which ``neo4jctl.py run`` sets, else ``tools/neo4j/run/pid``);
- this machine's speed right before each store is measured (``bench/shared/machine.py``: a memory-bound
  product and a pure-Python loop, as ``<store>.machine.*``), to compare runs of different days;
- CPU per fact of the bulk writes: this process's, and the Neo4j server's when its pid is known (on a
  machine with N cores, no store writes more than N / (total CPU ms per fact) facts per millisecond);
- hybrid search (``FACTS_HYBRID``) p50 / p95, now and as of the middle of the history
  (``time_travel_hybrid_*``), the file's size, the time to open it again (``open_first_search_s``,
  ``open_index_ready_s``) and, for the embedded store past ``--exact-below`` facts, the time to build its
  approximate vector index and write it next to the database (``index_build_s``; the file's size:
  ``index_file_mb``; the reopening reads it instead of building again) and its ``recall_at_10`` against
  brute force (``store_search.py``).

Neo4j runs when ``EPIGRAPH_NEO4J_URI`` is set (``make bench`` starts one, with the page cache and heap
of tools/neo4j/README.md "Performance", and measures the embedded store afterwards in a second run,
so an idle JVM does not share a small machine's cores with it). Prints a table and updates
``bench/results/store.json`` (DESIGN.md §9): the metrics measured now replace theirs, the others
(e.g. the embedded store's after a ``--stores neo4j`` run) are kept; ``--replace`` writes this run's
metrics only. Usage::

    python -m bench store [--sizes 10k 100k 1m] [--stores embedded neo4j] [--queries 200]
                          [--exact-below 50000] [--replace] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from bench.performance.store_process import (
    cpu_seconds,
    memory_mb,
    neo4j_pid,
    process_cpu_seconds,
    settle,
    simd_confirmation,
)
from bench.performance.store_search import (
    Queries,
    after_close,
    file_mb,
    index_file_mb,
    parse_size,
    searches,
    size_label,
    top10,
)
from bench.shared.machine import calibrate
from bench.shared.results import write_results
from bench.shared.stores import open_store as open_bench_store
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.embedded.ann import EXACT_BELOW
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Fact, Mention
from epigraph.graph.store import EpisodeWrite, FactFilter, GraphStore
from epigraph.graph.temporal import TimeFilter

DIM = 384
EARLY_FACTS = 200  # vector_as_of_early: searches as of when only the first 200 facts had begun
FIRST = "Ada Ben Cleo Dara Eli Fay Gus Hana Ivo Jun Kai Lia Milo Nia Omar Pia Quin Rosa Sam Tia".split()
LAST = "Stone Rivers Okafor Lindqvist Moreau Tanaka Silva Novak Haddad Kowalski Rossi Ng".split()
PLACES = "Lisbon Osaka Nairobi Quito Oslo Tunis Hanoi Perth Lyon Porto Cusco Turku".split()
TOPICS = "pottery chess climbing jazz sailing astronomy baking cycling poetry judo gardening".split()
RELATIONS = ["LIVES_IN", "WORKS_AT", "LIKES", "KNOWS", "VISITED", "STUDIES"]
VERBS = {
    "LIVES_IN": "lives in",
    "WORKS_AT": "works at",
    "LIKES": "enjoys",
    "KNOWS": "knows",
    "VISITED": "visited",
    "STUDIES": "studies",
}


LATENT = 48


@functools.cache
def _basis() -> np.ndarray:
    return np.random.default_rng(384).standard_normal((LATENT, DIM)).astype(np.float32)


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit vectors of low intrinsic dimension (48 latent directions and some noise), like sentence
    embeddings: random 384-d vectors have no near neighbours for an index to find (recall@10 0.39 at
    100k: docs/decisions/2026-12-02-vector-index.md). Brute force costs the same on either."""
    v = rng.standard_normal((n, LATENT)).astype(np.float32) @ _basis()
    v += 0.3 * rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def make_entities(group: str, n: int, rng: np.random.Generator) -> list[Entity]:
    vecs = unit_vectors(rng, n)
    names = []
    for i in range(n):
        kind = i % 3
        base = (
            f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST)) % len(LAST)]}"
            if kind == 0
            else PLACES[i % len(PLACES)]
            if kind == 1
            else TOPICS[i % len(TOPICS)]
        )
        names.append(f"{base} {i}")
    return [
        Entity(group_id=group, name=name, name_embedding=vecs[i].tolist()) for i, name in enumerate(names)
    ]


START = datetime(2023, 1, 1, tzinfo=UTC)


def make_episodes(
    group: str,
    entities: list[Entity],
    n_facts: int,
    per_write: int,
    rng: np.random.Generator,
    after: int = 0,
) -> Iterator[EpisodeWrite]:
    """Episodes of ``per_write`` facts; each fact joins two entities the episode also writes.

    Fact ``k`` of the run is stated (and begins) ``after + k`` minutes after ``START``, rounded down to
    its episode's first fact: ``after`` places this run's facts after an earlier run's.
    """
    vecs = unit_vectors(rng, n_facts)
    for first in range(0, n_facts, per_write):
        t = START + timedelta(minutes=after + first)
        ep = Episode(
            group_id=group, content=f"synthetic episode {first}", reference_time=t, status=EpisodeStatus.DONE
        )
        facts, touched = [], {}
        for k in range(first, min(first + per_write, n_facts)):
            a, b = (entities[i] for i in rng.choice(len(entities), 2, replace=False))
            rel = RELATIONS[k % len(RELATIONS)]
            touched[a.uuid], touched[b.uuid] = a, b
            facts.append(
                Fact(
                    group_id=group,
                    source_uuid=a.uuid,
                    target_uuid=b.uuid,
                    relation=rel,
                    text=f"{a.name} {VERBS[rel]} {b.name} since {1990 + k % 30}.",
                    text_embedding=vecs[k].tolist(),
                    episodes=[ep.uuid],
                    valid_at=t,
                    created_at=t,
                )
            )
        mentions = [Mention(group_id=group, episode_uuid=ep.uuid, entity_uuid=u) for u in touched]
        yield EpisodeWrite(episode=ep, entities=list(touched.values()), facts=facts, mentions=mentions)


@dataclass
class Timed:
    """Facts written, and seconds and this process's CPU seconds spent in the store alone; ``last``:
    the facts per second of the last chunk (on Neo4j the JVM is warmest there)."""

    facts: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    last: float = 0.0


async def timed_writes(
    store: GraphStore, writes: Iterator[EpisodeWrite], *, bulk: bool, chunk: int = 20
) -> Timed:
    """``write_episode`` one by one, or ``write_episodes`` of ``chunk`` episodes for ``bulk``, timed: the
    synthetic data is built in chunks outside the timed region, so the figures are the store's, not the
    generator's."""
    timed = Timed()
    while batch := list(itertools.islice(writes, chunk)):
        t0, c0 = time.perf_counter(), process_cpu_seconds()
        if bulk:
            await store.write_episodes(batch)
        else:
            for w in batch:
                await store.write_episode(w)
        spent = time.perf_counter() - t0
        facts = sum(len(w.facts) for w in batch)
        timed.facts += facts
        timed.seconds += spent
        timed.cpu += process_cpu_seconds() - c0
        timed.last = facts / spent
    return timed


async def latencies(calls: list) -> tuple[float, float]:
    out = []
    for call in calls:
        t0 = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t0) * 1000)
    return float(np.percentile(out, 50)), float(np.percentile(out, 95))


async def bench_store(
    name: str, store: GraphStore, size: int, queries: int, path: str = ""
) -> tuple[dict[str, float], Queries]:
    """The figures of one store at one size, and the queries the later ones (reopening) use."""
    rng = np.random.default_rng(size)
    group = f"bench-{size}-{int(time.time())}"
    entities = make_entities(group, max(50, size // 5), rng)
    episodic_n = min(size, 2_000)
    episodic = await timed_writes(store, make_episodes(group, entities, episodic_n, 10, rng), bulk=False)
    bulk_writes = make_episodes(group, entities, size - episodic_n, 1_000, rng, after=episodic_n)
    server = neo4j_pid() if name == "neo4j" else ""
    server0 = cpu_seconds(server) if server else None
    bulk = await timed_writes(store, bulk_writes, bulk=True)
    server_cpu = None if server0 is None else (cpu_seconds(server) or server0) - server0
    prefix = f"{name}.{size_label(size)}."
    built = {}
    if isinstance(store, EmbeddedStore):  # its approximate index, where the group is large enough
        t0 = time.perf_counter()
        if await store.prepare_vectors([group]):
            built[prefix + "index_build_s"] = time.perf_counter() - t0
    words = [*PLACES, *TOPICS, *FIRST]
    texts = [f"{words[i % len(words)]} {VERBS[RELATIONS[i % 6]]}" for i in range(queries)]
    text_calls = [functools.partial(store.search_facts_text, [group], q, 10) for q in texts]
    drawn = unit_vectors(rng, queries)
    vectors = drawn.tolist()
    vec_calls = [functools.partial(store.search_facts_vector, [group], v, 10) for v in vectors]
    early_time = START + timedelta(minutes=EARLY_FACTS - 1)
    early = FactFilter(time=TimeFilter(as_of=early_time))
    early_calls = [functools.partial(store.search_facts_vector, [group], v, 10, early) for v in vectors]
    known = FactFilter(time=TimeFilter(known_at=early_time))
    known_calls = [functools.partial(store.search_facts_vector, [group], v, 10, known) for v in vectors]
    await latencies(text_calls[:10] + vec_calls[:10])  # warm caches and indexes
    busy50, _ = await latencies(vec_calls[:50])  # right after the load: Neo4j may still be merging
    settled = await settle(name)
    ft50, ft95 = await latencies(text_calls)
    v50, v95 = await latencies(vec_calls)
    early50, _ = await latencies(early_calls)
    known50, _ = await latencies(known_calls)
    middle = START + timedelta(minutes=size // 2)
    then = FactFilter(time=TimeFilter(as_of=middle))  # the time-travel search's two halves, apart
    text_then50, text_then95 = await latencies([functools.partial(c, then) for c in text_calls])
    vec_then50, vec_then95 = await latencies([functools.partial(c, then) for c in vec_calls])
    asked = Queries(group, texts, drawn, middle)
    hybrids = await searches(store, asked, prefix)
    approximate = await top10(store, asked) if built else []
    episodic_rate = episodic.facts / episodic.seconds
    figures = {
        prefix + "episode_write_facts_per_s": episodic_rate,
        prefix + "bulk_write_facts_per_s": (bulk.facts / bulk.seconds) if bulk.facts else episodic_rate,
        prefix + "bulk_write_last_chunk_facts_per_s": bulk.last or episodic_rate,
        **_cpu_per_fact(prefix, bulk.facts, bulk.cpu, server_cpu),
        prefix + "fulltext_p50_ms": ft50,
        prefix + "fulltext_p95_ms": ft95,
        prefix + "vector_p50_ms": v50,
        prefix + "vector_p95_ms": v95,
        prefix + "vector_as_of_early_p50_ms": early50,
        prefix + "vector_known_at_early_p50_ms": known50,
        prefix + "fulltext_as_of_middle_p50_ms": text_then50,
        prefix + "fulltext_as_of_middle_p95_ms": text_then95,
        prefix + "vector_as_of_middle_p50_ms": vec_then50,
        prefix + "vector_as_of_middle_p95_ms": vec_then95,
        prefix + "memory_mb": memory_mb(name),
        prefix + "settle_s": settled,
        prefix + "vector_p50_right_after_load_ms": busy50,
        **hybrids,
        **built,
    }
    if (size_mb := file_mb(name, path)) is not None:
        figures[prefix + "file_mb"] = size_mb
    if built and (saved_mb := index_file_mb(path)) is not None:
        figures[prefix + "index_file_mb"] = saved_mb
    asked.approximate = approximate
    return figures, asked


def _cpu_per_fact(prefix: str, facts: int, process_cpu: float, server_cpu: float | None) -> dict[str, float]:
    """CPU milliseconds per fact of the bulk writes: this process inside the store calls (the embedded
    store's own work, or the Neo4j client's) and, when its pid is known, the Neo4j server over the whole
    bulk phase (merges it runs in the background included). With the wall time they bound the
    throughput: N cores cannot write more than N / (ms per fact) facts per millisecond."""
    if not facts:
        return {}
    out = {prefix + "bulk_process_cpu_ms_per_fact": process_cpu * 1000 / facts}
    if server_cpu is not None:
        out[prefix + "bulk_server_cpu_ms_per_fact"] = server_cpu * 1000 / facts
    return out


async def open_store(name: str, path: str, exact_below: int | None = EXACT_BELOW) -> GraphStore:
    """The store to measure; the embedded one on ``path``, searched exactly below ``exact_below``."""
    if name == "embedded":
        store = EmbeddedStore(path, exact_below=exact_below)
        await store.setup(embedding_dim=DIM)
        return store
    return await open_bench_store(name, path, DIM)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", type=parse_size, nargs="+", default=[10_000, 100_000], help="e.g. 10k 100k 1m"
    )
    parser.add_argument("--stores", nargs="+", default=["embedded", "neo4j"])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--exact-below",
        type=int,
        default=EXACT_BELOW,
        help=f"embedded: groups this large are searched through an approximate index (default {EXACT_BELOW})",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="write only this run's metrics (default: update them in the existing results file, "
        "keeping the figures of stores and sizes not measured now)",
    )
    parser.add_argument(
        "--results-dir", type=Path, default=None, help="where store.json goes (bench/results)"
    )
    args = parser.parse_args(argv)
    metrics: dict[str, float] = {}
    notes = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.stores:
            if name == "neo4j" and not os.environ.get("EPIGRAPH_NEO4J_URI"):
                notes.append("neo4j skipped: EPIGRAPH_NEO4J_URI not set")
                continue
            machine = calibrate()
            metrics.update({f"{name}.machine.{measure}": value for measure, value in machine.items()})
            for size in args.sizes:
                path = os.path.join(tmp, f"bench-{size}.db")
                store = await open_store(name, path, args.exact_below)
                try:
                    figures, asked = await bench_store(name, store, size, args.queries, path)
                finally:
                    await store.close()
                metrics.update(figures)
                reopen = functools.partial(open_store, name, path, args.exact_below)
                metrics.update(await after_close(name, reopen, path, size, asked))
                print(f"measured {name} at {size:,} facts", flush=True)
    notes.append(
        "episode writes: ~10 facts per write_episode for the first 2,000 facts; bulk: write_episodes of 20 "
        "episodes of 1,000 facts; bulk_write_last_chunk: the last of those calls alone"
    )
    notes.append("memory_mb: peak RSS of this process (embedded), RSS of the Neo4j JVM (neo4j)")
    notes.append(
        "machine: this machine's speed before each store was measured (bench/shared/machine.py): "
        "matvec_100k_ms, one thread over 100k x 384 float32 (memory-bound); python_ms, a fixed pure-Python "
        "loop"
    )
    if "neo4j" in args.stores and (java := os.environ.get("EPIGRAPH_NEO4J_JAVA")):
        notes.append(f"neo4j server: {java}{simd_confirmation()}")
    print_table(metrics)
    print(
        "wrote", write_results("store", metrics, notes, merge=not args.replace, results_dir=args.results_dir)
    )


def print_table(metrics: dict[str, float]) -> None:
    """One row per measure, one column per store and size (``neo4j.100k.vector_p50_ms`` -> row
    ``vector_p50_ms``, column ``neo4j 100k``); '-' where a column lacks the measure."""
    columns: dict[str, None] = {}
    rows: dict[str, dict[str, float]] = {}
    for key, value in metrics.items():
        store, size, measure = key.split(".", 2)
        column = f"{store} {size}"
        columns[column] = None
        rows.setdefault(measure, {})[column] = value
    width = max(len(m) for m in rows)
    print(f"{'':{width}s}" + "".join(f"{c:>14s}" for c in columns))
    for measure, values in rows.items():
        cells = "".join(f"{values[c]:14.2f}" if c in values else f"{'-':>14s}" for c in columns)
        print(f"{measure:{width}s}{cells}")


if __name__ == "__main__":
    asyncio.run(main())
