"""The ingesting process of the fault bench (``fault.py``): ingests a JSONL file of episodes in order,
one ``KnowledgeGraph.add_episode`` each, with the store, the LLM and the embedder its ``EPIGRAPH_*``
environment names and :data:`OPTIONS`, and tells its parent where it is, one JSON line on stdout per
event:

    {"event": "write", "uuid": ...}                  an episode's one atomic write begins
    {"event": "wrote", "uuid": ..., "ms": ..., "ok": ...}   and has returned
    {"event": "result", "uuid": ..., "ok": ..., "error": ...}   one per episode, at the end
    {"event": "finished", "ok": N, "failed": M}

The store is the one ``store_from_settings`` builds, wrapped only to print the two write lines around
``write_episode`` (it changes nothing the store does), so the parent can kill this process while an
episode's write is in flight. The parent kills it with SIGKILL at any point and starts it again on the
same file: episodes already ``done`` are skipped, the others run again.

    python -m bench.robustness.fault_child EPISODES.jsonl [--batch]

One ``add_episode`` each, one at a time; with ``--batch`` one ``add_episodes`` of them all, episodes in
flight as ``EPIGRAPH_IN_FLIGHT`` says (the ``*_window`` stores of the bench).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from epigraph import (
    EpisodeInput,
    EpisodeResult,
    GraphStore,
    IngestOptions,
    KnowledgeGraph,
    Settings,
    SummaryOptions,
)
from epigraph.client import store_from_settings
from epigraph.graph.store import EpisodeWrite

OPTIONS = IngestOptions(summaries=SummaryOptions(compose_max=0))
"""Every entity an episode touches gets its summary from the model (by default only one with more than
four current facts does), so every episode has a summary stage to be killed in."""


def say(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class SignallingStore:
    """``store`` as it is, with a line on stdout before and after each episode write."""

    def __init__(self, store: GraphStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def write_episode(self, write: EpisodeWrite) -> bool:
        say("write", uuid=write.episode.uuid, status=write.episode.status.value)
        started = time.perf_counter()
        ok = await self._store.write_episode(write)
        say("wrote", uuid=write.episode.uuid, ms=round((time.perf_counter() - started) * 1000, 3), ok=ok)
        return ok


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The episodes of a JSONL file: ``{"content", "reference_time", "group", "id"}`` a line."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def ingest(kg: KnowledgeGraph, rows: list[dict[str, Any]]) -> list[EpisodeResult]:
    """``rows`` (as :func:`read_rows` gives them) in order, one ``add_episode`` each."""
    results = []
    for row in rows:
        when = datetime.fromisoformat(row["reference_time"])
        group = kg.group(row["group"])
        results.append(await group.add_episode(row["content"], reference_time=when, episode_id=row["id"],
                                               raise_on_failure=False))  # fmt: skip
    return results


async def ingest_batch(kg: KnowledgeGraph, rows: list[dict[str, Any]]) -> list[EpisodeResult]:
    """``rows`` as ONE ``add_episodes`` (``--batch``): a group's next episodes run ahead while one is
    committed (``IngestOptions.in_flight``, from ``EPIGRAPH_IN_FLIGHT``); summaries per episode, as
    :func:`ingest`'s, so the graph is the same."""
    items = [
        EpisodeInput(row["content"], datetime.fromisoformat(row["reference_time"]), group_id=row["group"],
                     episode_id=row["id"])
        for row in rows
    ]  # fmt: skip
    return await kg.ingestor.add_episodes(items, summary_mode=None)


async def main(path: Path, batch: bool) -> int:
    settings = Settings.from_env()
    store: Any = SignallingStore(store_from_settings(settings))
    options = replace(OPTIONS, in_flight=settings.in_flight or 1)
    async with KnowledgeGraph(settings, store=store, options=options) as kg:
        results = await (ingest_batch if batch else ingest)(kg, read_rows(path))
    for r in results:
        say("result", uuid=r.episode.uuid, ok=r.ok, error=r.episode.error)
    failed = sum(1 for r in results if not r.ok)
    say("finished", ok=len(results) - failed, failed=failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), "--batch" in sys.argv[2:])))
