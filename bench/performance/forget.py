"""Forget benchmark: what forgetting one subject costs on an embedded file of 10,000 facts, and what the
compaction that follows (docs/decisions/2026-12-01-forgetting.md) adds.

The file: ``--facts`` facts (default 10,000) in episodes of 5 facts between 1,000 entities (384-d unit
vectors, one-sentence facts and messages), of which the subject, Zaria Quillfeather, is an end of 1 fact
in 50 and named in the text of 1 message in 25 and of their facts; the file is checkpointed before the
forgetting (what an older, busy file looks like: its pages in the file, not the WAL).

Measured, each once (the file is rebuilt per run; ``--runs`` repeats and keeps the median): the preview
(a dump of the group planned), the embeddings of the rewritten texts, the forgetting's transaction, and
each step of the compaction (FTS5 optimize of the three indexes, VACUUM, WAL checkpoint), with the
file's size (file + WAL) before and after; then a byte search of the file for the name, which must find
nothing. Writes ``bench/results/forget.json``. Usage::

    python -m bench forget [--facts 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from bench.shared.results import write_results
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.forget_plan import plan_forgetting
from epigraph.graph.forgetting import ForgetRequest, subject_hash
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Fact, Mention
from epigraph.graph.store import EpisodeWrite
from epigraph.testing import HashEmbedder

DIM = 384
GROUP = "bench"
NAME, ALIAS = "Zaria Quillfeather", "Zaria"
PER_EPISODE = 5
ENTITIES = 1000
START = datetime(2024, 1, 1, tzinfo=UTC)
FIRST = "Ada Ben Cleo Dara Eli Fay Gus Hana Ivo Jun Kai Lia Milo Nia Omar Pia Quin Rosa Sam Tia".split()
PLACES = "Lisbon Osaka Nairobi Quito Oslo Tunis Hanoi Perth Lyon Porto Cusco Turku".split()


def _vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


async def build(store: EmbeddedStore, facts: int, rng: np.random.Generator) -> Entity:
    """The file of the module docstring; returns the subject."""
    names = [NAME] + [f"{FIRST[i % len(FIRST)]} {PLACES[i % len(PLACES)]} {i}" for i in range(1, ENTITIES)]
    vecs = _vectors(rng, ENTITIES)
    entities = [
        Entity(
            group_id=GROUP,
            name=n,
            aliases=[ALIAS] if i == 0 else [],
            name_embedding=vecs[i].tolist(),
            summary=f"{n} is someone.",
        )
        for i, n in enumerate(names)
    ]
    subject = entities[0]
    fact_vecs = _vectors(rng, facts)
    for first in range(0, facts, PER_EPISODE):
        index = first // PER_EPISODE
        names_her = index % 25 == 0
        ep = Episode(
            group_id=GROUP,
            reference_time=START + timedelta(minutes=index),
            status=EpisodeStatus.DONE,
            source_description=f"chat-{index % 40}",
            content=("I saw Zaria Quillfeather today. " if names_her else "") + f"Message {index}.",
        )
        written: list[Fact] = []
        touched: dict[str, Entity] = {}
        for k in range(first, min(first + PER_EPISODE, facts)):
            a, b = (entities[int(i)] for i in rng.choice(range(1, ENTITIES), 2, replace=False))
            if k % 50 == 0:
                a = subject
            text = f"{a.name} knows {b.name}" + (" through Zaria." if names_her and a is not subject else ".")
            touched[a.uuid], touched[b.uuid] = a, b
            written.append(
                Fact(
                    group_id=GROUP,
                    source_uuid=a.uuid,
                    target_uuid=b.uuid,
                    relation="KNOWS",
                    text=text,
                    episodes=[ep.uuid],
                    text_embedding=fact_vecs[k].tolist(),
                    stated_at=ep.reference_time,
                )
            )
        mentions = [Mention(group_id=GROUP, episode_uuid=ep.uuid, entity_uuid=u) for u in touched]
        await store.write_episode(
            EpisodeWrite(episode=ep, entities=list(touched.values()), facts=written, mentions=mentions)
        )
    await store._run(lambda db: db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
    return subject


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _found(path: Path) -> int:
    data = b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
    return data.lower().count(b"zaria") + data.lower().count(b"quillfeather")


async def one_run(facts: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    embedder = HashEmbedder(dim=DIM)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "forget.db"
        store = EmbeddedStore(str(path))
        await store.setup(DIM)
        subject = await build(store, facts, rng)
        size_before, found_before = _size(path), _found(path)
        request = ForgetRequest(
            group_id=GROUP,
            now=datetime.now(UTC),
            entities=(subject.uuid,),
            names=(NAME, ALIAS),
            subject=subject_hash(NAME),
        )
        began = time.perf_counter()
        plan = plan_forgetting([item async for item in store.dump([GROUP])], request)
        preview_s = time.perf_counter() - began
        began = time.perf_counter()
        rows = await embedder.embed(list(plan.texts))
        vectors = {t: [float(x) for x in r] for t, r in zip(plan.texts, rows, strict=True)}
        embed_s = time.perf_counter() - began
        began = time.perf_counter()
        outcome = await store.forget(replace(request, vectors=vectors, expect=plan.digest))
        total_s = time.perf_counter() - began
        await store.close()
        compaction = outcome.compaction
        assert compaction is not None and compaction.done
        steps = compaction.steps
        optimize_s = sum(v for k, v in steps.items() if k.startswith("optimize_"))
        return {
            "facts_forgotten": float(len(plan.ids["facts"])),
            "facts_redacted": float(len(plan.ids["facts_redacted"])),
            "episodes_redacted": float(len(plan.ids["episodes_redacted"])),
            "entities_rewritten": float(len(plan.ids["entities_rewritten"])),
            "preview_s": preview_s,
            "embed_s": embed_s,
            "transaction_s": total_s - compaction.seconds,
            "compaction_s": compaction.seconds,
            "optimize_s": optimize_s,
            "vacuum_s": steps["vacuum"],
            "checkpoint_s": steps["checkpoint"],
            "size_before_mb": size_before / 2**20,
            "size_after_mb": _size(path) / 2**20 if path.exists() else compaction.size_after / 2**20,
            "name_bytes_before": float(found_before),
            "name_bytes_after": float(_found(path)),
        }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = [await one_run(args.facts, seed) for seed in range(args.runs)]
    size = f"{args.facts // 1000}k"
    metrics = {f"embedded.{size}.{k}": round(statistics.median(r[k] for r in runs), 4) for k in runs[0]}
    metrics[f"embedded.{size}.compaction_share"] = round(
        metrics[f"embedded.{size}.compaction_s"]
        / (metrics[f"embedded.{size}.compaction_s"] + metrics[f"embedded.{size}.transaction_s"]),
        3,
    )
    for key, value in metrics.items():
        print(f"{key:45} {value}")
    notes = [
        f"file: {args.facts} facts in episodes of {PER_EPISODE}, {ENTITIES} entities, 384-d vectors; the "
        "subject an end of 1 fact in 50 and named in 1 message in 25 (and its facts); checkpointed first",
        f"runs: {args.runs}, median of each figure; HashEmbedder for the rewritten texts",
        "compaction: FTS5 optimize x3, VACUUM, wal_checkpoint(TRUNCATE) (graph/embedded/forgetting.py)",
    ]
    print(write_results("forget", metrics, notes))


if __name__ == "__main__":
    asyncio.run(main())
