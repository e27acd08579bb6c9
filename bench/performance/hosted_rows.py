"""The hosted bench's library rows: a ``KnowledgeGraph`` configured as a user would for a hosted model
(``EPIGRAPH_LLM_*`` pointing at the simulated provider with its tier's RPM and TPM, OpenAI embeddings
from the same provider, the embedded store in a fresh file), fed one batch through the one ingestion
queue (``ingestor.ingest``: groups at once, each group's episodes in order; phases one after another),
timed per episode from its progress events, then audited from the store: every episode handed in is
``done``, ``failed`` or lost.

The gold sets' groups, when the batch holds them, are compared with the gold graph by the ingest bench's
own functions (``gold.graph_metrics``, ``candidate_recall``), keys ``<set>.gold.<key>``;
``quality_mismatches`` counts those that differ from ``bench/results/ingest.json``'s.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.performance.hosted_figures import cost, latencies, limit_share, refused, server_errors, until_share
from bench.performance.hosted_provider import API_KEY, CHAT_MODEL, EMBED_DIM, EMBED_MODEL, SimProvider, Tier
from bench.shared.gold import GoldSet, Shown, candidate_recall, graph_metrics, merged_aliases
from bench.shared.paths import RESULTS
from epigraph import KnowledgeGraph, Settings
from epigraph.episodes.events import EpisodeDone, EpisodeFailed, EpisodeUpdated
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.model import EpisodeStatus
from epigraph.pipeline.options import IngestOptions

INGEST_RESULTS = RESULTS / "ingest.json"


def hosted_settings(sim_url: str, tier: Tier, max_in_flight: int, db: Path) -> Settings:
    """What a user sets for a hosted model at ``tier`` (the provider's limits, known to the client)."""
    return Settings(
        db_path=str(db),
        llm_base_url=sim_url,
        llm_api_key=API_KEY,
        llm_model=CHAT_MODEL,
        llm_rpm=tier.rpm,
        llm_tpm=tier.tpm,
        llm_max_in_flight=max_in_flight,
        embedder="openai",
        embed_base_url=sim_url,
        embed_api_key=API_KEY,
        embed_model=EMBED_MODEL,
        embed_dim=EMBED_DIM,
    )


@dataclass
class Progress:
    """What the row saw happen, per episode index."""

    handed_at: float = 0.0
    """When the first phase was handed in."""
    handed: dict[int, float] = field(default_factory=dict)
    """When each done episode's phase was handed in (accepted, for the library)."""
    done_at: dict[int, float] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    results: dict[int, Any] = field(default_factory=dict)


async def _ingest(
    kg: KnowledgeGraph, phases: Sequence[Sequence[EpisodeInput]], cap_s: float
) -> tuple[Progress, bool]:
    """Each phase one batch (groups at once), the phases one after another, within ``cap_s`` in all."""
    progress = Progress(handed_at=time.monotonic())
    offset = 0
    try:
        async with asyncio.timeout(cap_s):
            for phase in phases:
                handed = time.monotonic()
                async for event in kg.ingestor.ingest(phase):
                    index = offset + event.index
                    if isinstance(event, EpisodeDone):
                        progress.done_at[index] = time.monotonic()
                        progress.handed[index] = handed
                        progress.results[index] = event.result
                    elif isinstance(event, EpisodeUpdated):
                        progress.results[index] = event.result
                    elif isinstance(event, EpisodeFailed):
                        progress.failed[index] = event.error
                        progress.results[index] = event.result
                offset += len(phase)
    except TimeoutError:
        return progress, True
    return progress, False


async def _statuses(kg: KnowledgeGraph, groups: Sequence[str]) -> dict[str, int]:
    counts = {s.value: 0 for s in EpisodeStatus}
    for group in groups:
        for status in EpisodeStatus:
            counts[status.value] += len(await kg.store.episodes(group, status=status, limit=1_000_000))
    return counts


async def _quality(kg: KnowledgeGraph, gold: Sequence[GoldSet], shown: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for gold_set in gold:
        seen = shown.get(gold_set.name, {"entities": {}, "facts": {}})
        metrics = await graph_metrics(kg.store, gold_set.name, gold_set.gold)
        merged = await merged_aliases(kg.store, gold_set.name, gold_set.gold)
        recorded = Shown(
            entities={k: set(v) for k, v in seen["entities"].items()},
            facts={k: set(v) for k, v in seen["facts"].items()},
        )
        metrics.update(candidate_recall(gold_set.gold, recorded, merged))
        out.update({f"{gold_set.name}.gold.{k}": v for k, v in metrics.items()})
    return out


def quality_mismatches(quality: dict[str, float], reference: Path = INGEST_RESULTS) -> list[str]:
    """The quality keys that differ from the ingest bench's (same scripted gold answers, default mode)."""
    expected = json.loads(reference.read_text(encoding="utf-8"))["metrics"]
    return [k for k, v in quality.items() if expected.get(k) != v]


def stage_means(reports: Sequence[Any]) -> dict[str, float]:
    """Each stage's mean time an episode (``IngestReport.stage_ms``), in ms: where a commit's time goes."""
    totals: dict[str, float] = {}
    for report in reports:
        for stage, ms in report.stage_ms.items():
            totals[stage] = totals.get(stage, 0.0) + ms
    count = max(1, len(reports))
    return {f"stage_ms.{stage}": round(total / count, 1) for stage, total in sorted(totals.items())}


async def library_row(
    sim: SimProvider,
    tier: Tier,
    phases: Sequence[Sequence[EpisodeInput]],
    gold: Sequence[GoldSet],
    *,
    max_in_flight: int,
    cap_s: float,
    workdir: Path,
    options: IngestOptions | None = None,
) -> dict[str, float]:
    """Ingest each phase (volume and the gold sets' turns) in one batch, one phase after another; the
    row's figures."""
    settings = hosted_settings(sim.url, tier, max_in_flight, workdir / "graph.db")
    items = [item for phase in phases for item in phase]
    groups = list(dict.fromkeys(i.group_id for i in items))
    async with KnowledgeGraph(settings, options=options) as kg:
        cpu_started = time.process_time()
        progress, cut = await _ingest(kg, phases, cap_s)
        cpu = time.process_time() - cpu_started
        statuses = await _statuses(kg, groups)
        stats = sim.stats()
        quality = await _quality(kg, [g for g in gold if g.name in groups], sim.gold_shown())
        client = kg.llm.stats  # type: ignore[union-attr]
        embed_tokens = float(getattr(kg.embedder, "input_tokens", 0))
    done = list(progress.done_at.values())
    reports = [r.report for r in progress.results.values() if r is not None]
    wall = (max(done) - progress.handed_at) if done else 0.0
    figures: dict[str, float] = {
        "messages": float(len(items)),
        "done": float(statuses["done"]),
        "failed": float(statuses["failed"]),
        "lost": float(0 if cut else len(items) - statuses["done"] - statuses["failed"]),
        "cut_by_time_cap": float(len(items) - statuses["done"] - statuses["failed"]) if cut else 0.0,
        "wall_s": round(wall, 1),
        "messages_per_min": round(len(done) / wall * 60, 2) if wall else 0.0,
        "http_429": float(refused(stats)),
        "http_5xx": float(server_errors(stats)),
        "client_rate_limited": float(client.rate_limited),
        "client_retries": float(client.retries),
        "client_max_in_flight": float(client.max_in_flight),
        "llm_calls_per_message": round(sum(r.llm_calls for r in reports) / max(1, len(reports)), 3),
        "max_in_flight_setting": float(max_in_flight),
        "client_cpu_share": round(cpu / wall, 3) if wall else 0.0,
    }
    figures.update(limit_share(stats["chat"], tier, until_share(done)))
    whole = limit_share(stats["chat"], tier, max(done) if done else 0.0)["limit_share"]
    figures["limit_share_whole_row"] = whole
    figures.update(
        cost(
            len(reports),
            sum(r.input_tokens for r in reports),
            sum(r.output_tokens for r in reports),
            embed_tokens,
        )
    )
    figures.update(
        latencies("accepted_to_done", [t - progress.handed[i] for i, t in progress.done_at.items()])
    )
    figures.update(latencies("processing", [sum(r.stage_ms.values()) / 1000 for r in reports]))
    figures.update(stage_means(reports))
    if quality:
        figures.update(quality)
        figures["quality_mismatches"] = float(len(quality_mismatches(quality)))
    return figures
