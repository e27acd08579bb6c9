"""Fault injection through the real client and a real HTTP server: every LLM failure mode.

20 episodes in two groups are ingested while the server misbehaves for some of them (429, 500, hang,
disconnect mid-stream, truncated reply, an unreadable line, missing usage). Every episode must end done or
failed with a reason, a failed episode must leave nothing in the graph, and a rerun must complete the
failed ones without duplicating anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import EpisodeStatus
from epigraph.graph.store import EVERYTHING, FactFilter
from epigraph.ingestion.ingestor import Ingestor
from epigraph.llm import Limiter, OpenAIChat, RetryPolicy
from epigraph.pipeline.options import IngestOptions, SummaryOptions
from epigraph.testing import HashEmbedder
from epigraph.testing.server import FakeOpenAIServer, Reply
from epigraph.tokens import load_encoding
from tests.support.world import T0

FAULTS = [
    None,
    "429",
    "500",
    "hang",
    "disconnect",
    "truncated",
    "invalid_json",
    "missing_usage",
    "bad_summary",
    None,
]
FAILING = {"429", "500", "hang", "disconnect"}
_SPEAKER = re.compile(r"Speaker: Person(\d+)\nMessage:")


def _content(i: int) -> str:
    return f"Person{i}: I work at Acme."


class Server:
    """Answers the pipeline's prompts for the Person/Acme world, with one fault per episode index."""

    def __init__(self) -> None:
        self.faulty = True

    def __call__(self, body: dict[str, Any]) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("Write a summary"):
            return self._summary(body["messages"][1]["content"])  # the first ask, also in a re-ask
        if system.startswith("You keep a knowledge graph"):  # Person1 vs Person3: close names, different
            asked = re.findall(r"^(E?\d+) ", user, re.M)  # people; and nothing a fact changes
            return Reply(text="\n".join(f"{i} new" for i in asked))
        match = _SPEAKER.search(user)
        assert match, user
        i = int(match.group(1))
        fault = FAULTS[i % len(FAULTS)] if self.faulty else None
        if system.startswith("You list what a message talks about"):
            return self._fault(fault, f"Person{i}; Acme", "entities")
        return self._fault(fault, f"[Person{i}] works at [Acme].", "facts")

    def _summary(self, user: str) -> Reply:
        entities = json.loads(user.split("Entities: ", 1)[1])
        last = entities[0]["facts"][-1]
        i = int(re.match(r"Person(\d+)", last).group(1))  # type: ignore[union-attr]
        if self.faulty and FAULTS[i % len(FAULTS)] == "bad_summary":
            return Reply(text="Sure! Acme is a company where many people work.")
        return Reply(
            text=json.dumps(
                {"summaries": [{"id": e["id"], "summary": f"{e['name']} employs people."} for e in entities]}
            )
        )

    @staticmethod
    def _fault(fault: str | None, text: str, prompt: str) -> Reply:
        if fault == "429":
            return Reply.rate_limited(retry_after=None, retry_after_ms=5)
        if fault == "500":
            return Reply.server_error()
        if fault == "hang":
            return Reply.hanging()
        if fault == "disconnect":
            return Reply.disconnect(text, after=3)
        if fault == "truncated" and prompt == "entities":
            return Reply.truncated(text[:-2])  # "Person5; Ac": a cut line is dropped whole
        if fault == "invalid_json" and prompt == "facts":
            return Reply(text="Person works at Acme, relation WORKS_AT")  # unreadable: no brackets
        if fault == "missing_usage":
            return Reply(text=text, usage=False)
        return Reply(text=text)


def _fault_of(content: str) -> str | None:
    return FAULTS[int(re.match(r"Person(\d+)", content).group(1)) % len(FAULTS)]  # type: ignore[union-attr]


def _items() -> Iterator[EpisodeInput]:
    for i in range(20):
        yield EpisodeInput(content=_content(i), reference_time=T0, group_id=f"g{i % 2}")


@pytest.fixture(scope="module", autouse=True)
def _warm_tokenizer() -> None:
    load_encoding()


async def test_every_failure_mode_ends_done_or_failed_and_a_rerun_completes(embedder: HashEmbedder) -> None:
    server = Server()
    async with FakeOpenAIServer(server) as srv, EmbeddedStore(":memory:") as store:
        await store.setup(embedder.dim)
        llm = OpenAIChat(
            model="fake-model", base_url=srv.base_url, api_key="sk-test", timeout=2.0,  # a loaded machine too
            retry=RetryPolicy(max_attempts=2, max_retry_seconds=3.0, base_delay=0.01, max_delay=0.02),
            limiter=Limiter(max_in_flight=4),
        )  # fmt: skip
        async with llm:
            ingestor = Ingestor(
                store, llm, embedder, IngestOptions(summaries=SummaryOptions(mode="episode", compose_max=1))
            )
            first = await ingestor.add_episodes(list(_items()), summary_mode=None)

            failed = [r for r in first if not r.ok]
            assert {_fault_of(r.episode.content) for r in failed} == FAILING
            for result in first:
                assert result.episode.status in (EpisodeStatus.DONE, EpisodeStatus.FAILED)
                if not result.ok:
                    assert result.error, "a failed episode says why"
            for result in failed:
                person = result.episode.content.split(":")[0]
                assert (await store.entities_by_names(result.episode.group_id, [person]))[person] == [], (
                    "nothing half-written"
                )
            by_fault = {FAULTS[i % len(FAULTS)]: r for i, r in enumerate(first)}
            assert by_fault["truncated"].report.truncated
            assert by_fault["invalid_json"].ok and by_fault["invalid_json"].report.dropped_lines == 1
            assert by_fault["missing_usage"].ok and by_fault["missing_usage"].report.input_tokens > 0
            assert any("summarize_entities" in w for w in by_fault["bad_summary"].report.warnings)
            assert srv.max_in_flight <= 4

            server.faulty = False
            retried = [r for g in ("g0", "g1") for r in await ingestor.retry_failed(g)]
            assert sorted(r.episode.uuid for r in retried) == sorted(r.episode.uuid for r in failed)
            assert all(r.ok for r in retried)
            assert [r for g in ("g0", "g1") for r in await ingestor.retry_failed(g)] == []
            await ingestor.add_episodes(list(_items()))  # everything again: all skipped

        for group in ("g0", "g1"):
            stats = await store.stats(group)
            mine = [i for i in range(20) if i % 2 == int(group[1])]
            cut = sum(1 for i in mine if FAULTS[i % len(FAULTS)] == "truncated")  # its one name line was cut
            assert (stats.episodes, stats.entities) == (10, 11 - cut), "the people and one Acme, none twice"
            acme = (await store.entities_by_names(group, ["Acme"]))["Acme"][0]
            facts = await store.facts_around(group, [acme.uuid], FactFilter(time=EVERYTHING))
            texts = [f.text for f in facts]
            assert len(texts) == len(set(texts)) == stats.facts
            lost = {"truncated", "invalid_json"}  # done with a warning: their facts were not in the reply
            expected = sum(
                1 for i in range(20) if i % 2 == int(group[1]) and FAULTS[i % len(FAULTS)] not in lost
            )
            assert stats.facts == expected
            done = await store.episodes(group, status=EpisodeStatus.DONE, limit=100)
            assert len(done) == 10
