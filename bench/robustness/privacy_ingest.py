"""What redaction costs an ingestion (the privacy bench's ``time_ratio``): the generated set ingested
with ``IngestOptions(redact=True)`` and without, into a fresh embedded store file each time, by a scripted
model that answers what a careful model would, the same graph either way: a fact from the speaker to each
piece of personal data its message holds (the value itself with the policy off, its placeholder on),
with the hash embedder. Runs alternate off and on, so the machine's drift touches both alike; the
medians are compared."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.robustness.privacy_set import Message
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.placeholders import PLACEHOLDER
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import IngestOptions
from epigraph.privacy.detectors import find
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.grammar import NONE
from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import HashEmbedder, ScriptedLLM

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def answer(request: ChatRequest) -> str:
    if request.prompt_name == "extract_combined":
        content = ExtractionInput.model_validate(request.variables).content()
        speaker, _, text = content.partition(": ")
        values = [m.group() for m in PLACEHOLDER.finditer(text)] or [
            text[s.start : s.end] for s in find(text)
        ]
        things = list(dict.fromkeys(values))[:3]
        return (
            "\n".join(write_fact(f"{speaker} mentioned {t}.", speaker, t, "MENTIONED", "") for t in things)
            or NONE
        )
    if request.prompt_name == "resolve_episode":
        ids = [q["id"] for q in request.variables["entities"]] + [f["id"] for f in request.variables["facts"]]
        return "\n".join(f"{i} new" for i in ids)
    return '{"summaries": []}'


async def ingest_once(messages: Sequence[Message], path: Path, redact: bool) -> float:
    embedder = HashEmbedder(dim=64)
    items = [
        EpisodeInput(
            content=m.text, speaker=m.speaker, reference_time=T0 + timedelta(minutes=i), group_id="privacy"
        )
        for i, m in enumerate(messages)
    ]
    async with EmbeddedStore(str(path)) as store:
        await store.setup(embedder.dim)
        ingestor = Ingestor(
            store, ScriptedLLM(answer), embedder, IngestOptions(mode="combined", redact=redact)
        )
        started = time.perf_counter()
        results = await ingestor.add_episodes(items)
        elapsed = time.perf_counter() - started
    if not all(r.ok for r in results):
        raise SystemExit(f"an episode failed: {next(r.episode.error for r in results if not r.ok)}")
    return elapsed


async def ingest_seconds(messages: Sequence[Message], scratch: Path, runs: int) -> tuple[float, float]:
    """The median wall seconds of ingesting ``messages`` with the policy off, and on."""
    off, on = [], []
    for run in range(runs):
        off.append(await ingest_once(messages, scratch / f"off-{run}.db", redact=False))
        on.append(await ingest_once(messages, scratch / f"on-{run}.db", redact=True))
    return statistics.median(off), statistics.median(on)
