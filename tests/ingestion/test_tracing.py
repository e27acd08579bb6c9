"""OpenTelemetry spans of an episode, its stages and its model calls, read with the real SDK's in-memory
exporter while the real OpenAI client talks to the local test server; and nothing of OpenTelemetry
imported while tracing is off (a subprocess with OpenTelemetry made unimportable, and the modules
loaded after a whole run)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from epigraph import KnowledgeGraph, Settings, tracing
from epigraph.embed import OpenAIEmbedder
from epigraph.graph.embedded import EmbeddedStore
from epigraph.llm import OpenAIChat
from epigraph.llm.limiter import RetryPolicy
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.grammar import NONE
from epigraph.testing import HashEmbedder
from epigraph.testing.reading import asked_in, episode_in, prompt_of
from epigraph.testing.server import FakeOpenAIServer, Reply

T = datetime(2024, 5, 2, 10, tzinfo=UTC)
MODEL = "fake-model"
EMBED = "fake-embedder"


class Answers:
    """The pipeline's prompts answered for "Alice met Bob." (two entities, one fact); an episode with
    "fail" in it gets HTTP 500; the first call after ``throttle()`` gets a 429 first."""

    def __init__(self) -> None:
        self.throttled = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = prompt_of(body)
        if prompt == "resolve_episode":
            entities, facts = asked_in(body)
            return Reply("\n".join([*(f"{e.id} new" for e in entities), *(f"{f.id} none" for f in facts)]))
        if prompt == "summarize_entities":
            return Reply(json.dumps({"summaries": []}))
        episode = episode_in(body)
        if "fail" in episode:
            return Reply.server_error()
        if self.throttled:
            self.throttled = False
            return Reply.rate_limited(0)
        if prompt == "extract_entities":
            return Reply("Alice; Bob")
        return Reply(write_fact("Alice met Bob.", "Alice", "Bob", "MET", "") if "Bob" in episode else NONE)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    try:
        yield exporter
    finally:
        tracing.disable()


@pytest.fixture
async def served() -> AsyncIterator[tuple[FakeOpenAIServer, Answers]]:
    answers = Answers()
    async with FakeOpenAIServer(answers, models=(MODEL, EMBED), embed_dim=16) as server:
        yield server, answers


def graph(server: FakeOpenAIServer) -> KnowledgeGraph:
    llm = OpenAIChat(model=MODEL, base_url=server.base_url, api_key="k",
                     retry=RetryPolicy(max_attempts=2, base_delay=0.01))  # fmt: skip
    embedder = OpenAIEmbedder(model=EMBED, base_url=server.base_url, api_key="k", dim=16)
    return KnowledgeGraph(store=EmbeddedStore(":memory:"), llm=llm, embedder=embedder)


def by_name(found: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in found if s.name.startswith(prefix)]


async def test_an_episode_its_stages_and_model_calls_are_spans_on_the_genai_conventions(
    spans: InMemorySpanExporter, served: tuple[FakeOpenAIServer, Answers]
) -> None:
    server, answers = served
    async with graph(server) as kg:
        answers.throttled = True  # the first model call is answered 429 once, then retried
        result = await kg.add_episode("Alice: Alice met Bob.", reference_time=T)
    assert result.ok
    found = spans.get_finished_spans()
    (episode,) = by_name(found, "ingest episode")
    attributes = dict(episode.attributes or {})
    assert attributes["epigraph.episode.uuid"] == result.episode.uuid
    assert attributes["epigraph.episode.status"] == "done"
    assert attributes["epigraph.episode.llm_calls"] == result.report.llm_calls == 2
    assert attributes["epigraph.episode.input_tokens"] == result.report.input_tokens > 0
    assert episode.status.status_code == StatusCode.UNSET

    stages = {s.attributes["epigraph.stage"]: s for s in by_name(found, "stage ") if s.attributes}
    assert set(stages) == set(result.report.stage_ms)  # one span per timed stage of the report
    calls = by_name(found, f"chat {MODEL}")
    assert len(calls) == len(server.chat_requests) - 1  # the 429 was a retry inside one call
    for span in [*stages.values(), *calls]:
        assert span.parent is not None and span.parent.span_id == episode.context.span_id
        assert span.context.trace_id == episode.context.trace_id
        assert episode.start_time <= span.start_time <= span.end_time <= episode.end_time
    prompts = sorted(str(dict(c.attributes or {})["epigraph.prompt"]) for c in calls)
    assert prompts == sorted(result.report.per_prompt)
    first = min(calls, key=lambda s: s.start_time)
    call = dict(first.attributes or {})
    assert first.kind == SpanKind.CLIENT
    assert call["gen_ai.operation.name"] == "chat" and call["gen_ai.provider.name"] == "openai"
    assert call["gen_ai.system"] == "openai" and call["gen_ai.request.model"] == MODEL
    assert call["gen_ai.response.model"] == MODEL and call["epigraph.attempts"] == 2
    usage = result.report.per_prompt[str(call["epigraph.prompt"])]
    assert (call["gen_ai.usage.input_tokens"], call["gen_ai.usage.output_tokens"]) == (
        usage.input_tokens, usage.output_tokens,
    )  # fmt: skip
    assert call["gen_ai.response.finish_reasons"] == ("stop",)
    assert call["server.address"] == "127.0.0.1" and call["server.port"] == server.port
    assert isinstance(call["gen_ai.request.max_tokens"], int) and call["gen_ai.request.temperature"] == 0.0
    assert kg.llm is not None and isinstance(kg.llm, OpenAIChat)
    embeddings = by_name(found, f"embeddings {EMBED}")
    embedded = [r for r in server.requests if r.path.endswith("/embeddings")]
    assert len(embeddings) == len(embedded) == result.report.embedding_requests > 0
    for span in embeddings:
        vector = dict(span.attributes or {})
        assert span.kind == SpanKind.CLIENT and span.parent is not None
        assert span.parent.span_id == episode.context.span_id
        assert vector["gen_ai.operation.name"] == "embeddings" and vector["gen_ai.request.model"] == EMBED
        assert vector["gen_ai.provider.name"] == "openai"
        assert int(str(vector["gen_ai.usage.input_tokens"])) > 0
    counted = kg.llm.calls.snapshot()
    assert sum(c.retries for c in counted.values()) == 1
    assert sum(c.calls for c in counted.values()) == len(calls)


async def test_a_failed_episode_and_its_failed_call_carry_the_error(
    spans: InMemorySpanExporter, served: tuple[FakeOpenAIServer, Answers]
) -> None:
    server, _ = served
    async with graph(server) as kg:
        result = await kg.add_episode("Alice: this will fail", reference_time=T, raise_on_failure=False)
    assert not result.ok and result.error is not None
    found = spans.get_finished_spans()
    (episode,) = by_name(found, "ingest episode")
    assert episode.status.status_code == StatusCode.ERROR
    assert dict(episode.attributes or {})["error.type"] == result.error.split(":")[0]
    assert dict(episode.attributes or {})["epigraph.episode.status"] == "failed"
    (call,) = by_name(found, f"chat {MODEL}")
    assert call.status.status_code == StatusCode.ERROR
    assert dict(call.attributes or {})["error.type"] == "LLMUnavailable"
    assert dict(call.attributes or {})["epigraph.attempts"] == 2


async def test_tracing_off_records_nothing(served: tuple[FakeOpenAIServer, Answers]) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    tracing.disable()
    server, _ = served
    async with graph(server) as kg:
        assert (await kg.add_episode("Alice: Alice met Bob.", reference_time=T)).ok
    assert exporter.get_finished_spans() == () and not tracing.enabled()


OFF = """
import asyncio, sys
from datetime import UTC, datetime
{block}
from epigraph import KnowledgeGraph
from epigraph.embed import OpenAIEmbedder
from epigraph.graph.embedded import EmbeddedStore
from epigraph.testing import HashEmbedder, ScriptedLLM

async def main():
    llm = ScriptedLLM(lambda r: "none")
    async with KnowledgeGraph(store=EmbeddedStore(":memory:"), llm=llm, embedder=HashEmbedder(dim=8)) as kg:
        result = await kg.add_episode("Ann: hello", reference_time=datetime(2024, 1, 1, tzinfo=UTC))
        print(result.ok, sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
asyncio.run(main())
"""
BLOCK = """
class _NoOtel:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            raise ImportError("opentelemetry is not installed here")
        return None
sys.meta_path.insert(0, _NoOtel())
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("block", ["", BLOCK], ids=["installed", "unimportable"])
def test_with_tracing_off_a_run_imports_nothing_of_opentelemetry(block: str) -> None:
    done = _run(textwrap.dedent(OFF.format(block=block)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True []"


ENABLE = """
from epigraph import tracing
try:
    tracing.enable()
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_tracing_on_without_opentelemetry_says_which_extra_to_install() -> None:
    done = _run(textwrap.dedent("import sys\n" + BLOCK + ENABLE))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ConfigError") and "pip install 'epigraph[otel]'" in done.stdout


def test_the_setting_turns_tracing_on(spans: InMemorySpanExporter) -> None:
    tracing.disable()
    KnowledgeGraph(Settings(tracing=True), store=EmbeddedStore(":memory:"), embedder=HashEmbedder(dim=8))
    assert tracing.enabled()
