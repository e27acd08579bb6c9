"""Entity summaries from the entity's currently believed facts only (a retired fact never lingers).

An entity with at most ``SummaryOptions.compose_max`` facts gets them joined as its summary, without a model.
Larger ones need the summarize_entities prompt: all of them in ONE call (chunked by ``SummaryOptions.batch``),
either per episode (``SummaryOptions.mode="episode"``) or once per group at the end of a batch (``"batch"``,
entities keep a composed summary of their newest facts in between); ``"off"`` never calls the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from ..errors import StructuredOutputError
from ..graph.derived import chronological
from ..graph.derived import compose_summary as compose
from ..graph.model import Entity, Fact
from ..graph.store import FactFilter, GraphReads
from ..graph.temporal import EVERYTHING, is_current
from ..prompts import summarize_entities as sp
from ..prompts.protocol import LLM
from ..prompts.runtime import run as run_prompt
from .metering import ReportBuilder
from .options import SummaryOptions


async def current_facts(
    store: GraphReads,
    group_id: str,
    uuids: Iterable[str],
    now: datetime,
    pending: Mapping[str, Fact] | None = None,
    limit: int = 60,
) -> dict[str, list[Fact]]:
    """Current facts per entity (``graph.temporal.is_current``, what a summary may say): stored ones
    overlaid with ``pending`` (this episode's writes)."""
    pending = pending or {}
    ids = list(dict.fromkeys(uuids))
    stored = await asyncio.gather(
        *(store.facts_around(group_id, [u], FactFilter(time=EVERYTHING), limit=limit) for u in ids)
    )
    result: dict[str, list[Fact]] = {}
    for uuid, facts in zip(ids, stored, strict=True):
        merged = {f.uuid: f for f in facts}
        merged.update({k: f for k, f in pending.items() if uuid in (f.source_uuid, f.target_uuid)})
        result[uuid] = [f for f in merged.values() if is_current(f, now)]
    return result


async def summarize(
    llm: LLM,
    options: SummaryOptions,
    report: ReportBuilder,
    items: Sequence[tuple[Entity, list[Fact]]],
    *,
    use_model: bool,
) -> tuple[dict[str, str], set[str]]:
    """New summaries by entity uuid, and the uuids that still want a model summary (not given one)."""
    summaries: dict[str, str] = {}
    big: list[tuple[Entity, list[Fact]]] = []
    for entity, facts in items:
        summaries[entity.uuid] = compose(facts, options.compose_max)
        if len(facts) > options.compose_max:
            big.append((entity, facts))
    if not big or not use_model:
        return summaries, {e.uuid for e, _ in big}
    size = max(1, options.batch)
    chunks = [big[i : i + size] for i in range(0, len(big), size)]
    answers = await asyncio.gather(*(_ask(llm, options, report, chunk) for chunk in chunks))
    for answer in answers:
        summaries.update(answer)
    return summaries, set()


async def _ask(
    llm: LLM, options: SummaryOptions, report: ReportBuilder, chunk: Sequence[tuple[Entity, list[Fact]]]
) -> dict[str, str]:
    offered = {str(i + 1): entity for i, (entity, _) in enumerate(chunk)}
    data = sp.SummarizeEntitiesInput(
        entities=[
            sp.EntityFacts(
                id=key,
                name=entity.name,
                facts=[f.text for f in chronological(facts)[-options.facts_max :]],
            )
            for key, (entity, facts) in zip(offered, chunk, strict=True)
        ]
    )
    try:
        result = await run_prompt(llm, sp.PROMPT, data)
    except StructuredOutputError as exc:
        report.warn(f"summarize_entities gave no usable reply ({exc}); composed summaries kept")
        return {}
    answer: sp.SummarizeEntitiesOutput = result.value
    out: dict[str, str] = {}
    for item in answer.summaries:
        entity = offered.get(item.id)
        if entity is None:
            report.warn(f"summarize_entities answered for unknown id {item.id!r}; ignored")
        elif item.summary.strip():
            out[entity.uuid] = " ".join(item.summary.split())
    return out
