"""epigraph quickstart: a three-session chat in which facts change, turned into a temporal graph.

Alice starts a job in Paris, moves to Berlin and changes jobs; Bob changes schools; a nickname turns up.
The script ingests the conversation, then prints entity summaries, the facts that hold now and the
history of retired facts (when, and which later statement retired them).

With an LLM configured (EPIGRAPH_LLM_BASE_URL, EPIGRAPH_LLM_API_KEY, EPIGRAPH_LLM_MODEL) it runs live;
with EPIGRAPH_LLM=local (``make demo-live``) it runs live on the local model (``epigraph[local-model]``,
offline), started for the run unless ``epigraph model start`` left one running. Live runs also print
how long each episode and the whole run took. Without an LLM it replays the recorded answers in
``examples/recorded/quickstart.json`` through a ScriptedLLM, and says so in its first line. Run it with
``make demo`` or ``python examples/quickstart.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from epigraph import EpisodeInput, EpisodeResult, KnowledgeGraph
from epigraph.config import Settings
from epigraph.embed import Embedder, embedder_from_settings
from epigraph.graph.model import Fact, utc_now
from epigraph.graph.store import EVERYTHING, FactFilter, GraphStore
from epigraph.graph.temporal import interval, is_current
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.grammar import NONE
from epigraph.prompts.protocol import LLM, ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import HashEmbedder, ScriptedLLM

RECORDED = Path(__file__).resolve().parent / "recorded" / "quickstart.json"
GROUP = "quickstart"
SESSIONS = [
    ("2023-03-10T18:00:00Z", [
        ("Alice", "Hi Bob! I just started as a designer at Acme, here in Paris."),
        ("Bob", "Congrats! I've been teaching at the Lycée Voltaire for five years now."),
        ("Alice", "Bye!"),
    ]),
    ("2023-09-02T10:30:00Z", [
        ("Alice", "Big news: I moved to Berlin last month and joined Globex."),
        ("Bob", "Wow! Is Globex the startup your sister Carol founded?"),
        ("Alice", "Yes, Carol founded Globex in 2019, and I work there now."),
    ]),
    ("2024-01-15T20:00:00Z", [
        ("Bob", "I left the Lycée last week; I teach at the Sorbonne now."),
        ("Alice", "Nice! Carol lives in Berlin too, two streets from me."),
        ("Bob", "Say hi to Caro for me!"),
    ]),
]  # fmt: skip


def conversation() -> list[EpisodeInput]:
    return [
        EpisodeInput(
            content=text, speaker=speaker, reference_time=datetime.fromisoformat(when), group_id=GROUP
        )
        for when, turns in SESSIONS
        for speaker, text in turns
    ]


class Replay:
    """Answers the pipeline's prompts from the recording. Resolution answers are recorded by name and
    sentence, not by candidate id, so they replay whatever candidates this run's embedder finds."""

    def __init__(self, recording: Mapping[str, Any]) -> None:
        self.r = recording

    def __call__(self, request: ChatRequest) -> str:
        v = request.variables
        name = request.prompt_name
        if name in ("extract_entities", "extract_facts", "extract_combined"):
            content = ExtractionInput.model_validate(v).content()
            return "\n".join(self.r[name].get(content, [])) or NONE
        return str(getattr(self, name)(v))

    def resolve_episode(self, v: Mapping[str, Any]) -> str:
        """One decision line per asked item (``prompts.resolve_episode``)."""
        lines = []
        for q in v["entities"]:
            same = (self.r["resolve_entity"].get(q["name"]) or "").casefold()
            match = next((c["id"] for c in q["candidates"] if same and c["name"].casefold() == same), None)
            lines.append(f"{q['id']} {match or 'new'}")
        for item in v["facts"]:
            known = self.r["resolve_fact"].get(item["fact"], {})
            picked = {k: [c["id"] for c in item["candidates"] if c["fact"] in known.get(k, [])]
                      for k in ("duplicate_of", "contradicts")}  # fmt: skip
            lines.append(verdict_line(item["id"], picked["duplicate_of"], picked["contradicts"]))
        return "\n".join(lines)

    def summarize_entities(self, v: Mapping[str, Any]) -> str:
        summaries = self.r["summarize_entities"]
        out = [
            {"id": e["id"], "summary": summaries.get(e["name"], " ".join(e["facts"][-3:]))}
            for e in v["entities"]
        ]
        return json.dumps({"summaries": out})


def choose_llm(settings: Settings) -> tuple[LLM | None, str]:
    """The LLM and a note saying which; None: the graph starts the local model itself."""
    if settings.llm_local:
        return None, "running LIVE on the local model (epigraph[local-model]), offline"
    if settings.llm_configured:
        from epigraph.llm import OpenAIChat

        where = settings.llm_base_url or "the OpenAI API"
        return OpenAIChat.from_settings(settings), f"running LIVE against {settings.llm_model} at {where}"
    recording = json.loads(RECORDED.read_text(encoding="utf-8"))
    note = (
        f"running on RECORDED responses ({RECORDED.relative_to(RECORDED.parents[2])}); set "
        "EPIGRAPH_LLM_BASE_URL, EPIGRAPH_LLM_API_KEY and EPIGRAPH_LLM_MODEL to run live (or `make demo-live`)"
    )
    return ScriptedLLM(Replay(recording)), note


async def close(llm: LLM | None) -> None:
    """Close the client :func:`choose_llm` made (a recorded or local one has nothing to close)."""
    aclose = getattr(llm, "aclose", None)
    if aclose is not None:
        await aclose()


def choose_embedder(settings: Settings) -> Embedder:
    """The configured embedder; the model-free HashEmbedder when the local model is not installed."""
    if settings.embedder == "sentence-transformers":
        try:
            import sentence_transformers  # noqa: F401
        except ImportError:
            return HashEmbedder(dim=settings.embed_dim)
    return embedder_from_settings(settings)


def describe(result: EpisodeResult, index: int, *, timed: bool = False) -> str:
    r = result.report
    retired = f", {len(result.invalidated)} retired" if result.invalidated else ""
    status = "ok" if result.ok else f"FAILED ({result.error})"
    took = f", {sum(r.stage_ms.values()) / 1000:.1f} s" if timed else ""
    return (
        f"  {index:>2}. {result.episode.content[:58]:<58} {status}: {len(result.entities)} entities, "
        f"{len(result.facts)} facts{retired} | {r.llm_calls} calls, {r.input_tokens + r.output_tokens} tokens"
        f"{took}"
    )


async def show_graph(store: GraphStore, results: list[EpisodeResult]) -> None:
    touched = {e.uuid for r in results for e in r.entities}
    touched |= {u for r in results for f in r.facts for u in (f.source_uuid, f.target_uuid)}
    entities = {e.uuid: e for e in await store.get_entities(GROUP, sorted(touched))}
    facts = await store.facts_around(GROUP, list(entities), FactFilter(time=EVERYTHING), limit=1000)
    by_uuid = {f.uuid: f for f in facts}
    print("\nEntity summaries")
    for entity in sorted(entities.values(), key=lambda e: e.name):
        aliases = f" (also: {', '.join(entity.aliases)})" if entity.aliases else ""
        print(f"  {entity.name}{aliases}: {entity.summary or '-'}")
    print("\nCurrent facts")
    now = utc_now()
    for fact in sorted((f for f in facts if is_current(f, now)), key=_when):
        print(f"  {_date(fact.valid_at):>10}  {fact.text}")
    print("\nHistory: retired facts")
    for fact in sorted((f for f in facts if f.invalidated_by is not None), key=_when):
        by = by_uuid.get(fact.invalidated_by.fact_uuid) if fact.invalidated_by else None
        print(f"  {_date(fact.valid_at):>10} .. {_date(fact.invalid_at):<10} {fact.text}")
        print(f"  {'':>14}retired by: {by.text if by else '?'}")


def _when(fact: Fact) -> tuple[datetime, str]:
    return interval(fact)[0] or fact.created_at, fact.text


def _date(value: datetime | None) -> str:
    return value.astimezone(UTC).date().isoformat() if value else "?"


async def main() -> int:
    settings = Settings.from_env(db_path=":memory:")
    llm, note = choose_llm(settings)
    print(f"epigraph quickstart: {note}")
    embedder = choose_embedder(settings)
    live = not isinstance(llm, ScriptedLLM)
    async with KnowledgeGraph(settings, llm=llm, embedder=embedder, group_id=GROUP) as kg:
        print(f"\nIngesting {sum(len(t) for _, t in SESSIONS)} turns of 3 sessions")
        began = time.monotonic()
        results = await kg.add_episodes(conversation())
        for index, result in enumerate(results, start=1):
            print(describe(result, index, timed=live))
        calls = sum(r.report.llm_calls for r in results)
        tokens = sum(r.report.input_tokens + r.report.output_tokens for r in results)
        took = f", {time.monotonic() - began:.0f} s" if live else ""
        print(f"  total: {calls} LLM calls, {tokens} tokens, {calls / len(results):.2f} calls per turn{took}")
        await show_graph(kg.store, results)
    await close(llm)
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
