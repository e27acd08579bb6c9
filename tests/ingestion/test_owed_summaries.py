"""Batch summaries survive a crash: ``epigraph ingest`` (``summary_mode="batch"``) as a real child process,
killed (SIGKILL) while its one summarize call of the batch is in flight; every episode is done by then
and the entities it made stale are marked owed in their episodes' writes, so a resumed run, which skips
the done episodes, still writes their summaries.

The LLM is the local OpenAI-compatible test server, run in this test's event loop: it answers the
pipeline's prompts from the episode's words and holds the summarize request until the child is killed,
so the kill lands inside that call, deterministically (no sleep races it). The server's queue pays what
a group owes when it starts, even with no episode pending.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import EpisodeStatus
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import IngestOptions, SummaryOptions
from epigraph.prompts.grammar import NONE
from epigraph.testing import HashEmbedder
from epigraph.testing.reading import asked_in, episode_in, prompt_of
from epigraph.testing.server import FakeOpenAIServer, Reply
from tests.support.meetings import meetings_file
from tests.support.world import T0, World, hobbies

KEY = "llm-test-key-not-a-secret"
MET = ["Bob", "Carol", "Dave", "Erin", "Frank", "Grace"]
"""Alice meets each of them: six facts, more than ``summary_compose_max``, so Alice needs the model."""


class Model:
    """Answers extraction ("Alice met Bob." -> Alice, Bob, "Alice knows Bob."), resolution (all new:
    exact names merge without it) and summaries ("<name>, summarized."); while ``holding``, a summarize
    request is held (``asked`` set) until ``release``."""

    def __init__(self) -> None:
        self.holding = True
        self.asked = asyncio.Event()
        self.release = asyncio.Event()
        self.prompts: list[str] = []

    async def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = prompt_of(body) or "other"
        self.prompts.append(prompt)
        if prompt == "summarize_entities":
            if self.holding:
                self.asked.set()
                await self.release.wait()
            entities = json.loads(body["messages"][1]["content"].split("Entities: ", 1)[1])
            out = [{"id": e["id"], "summary": f"{e['name']}, summarized."} for e in entities]
            return Reply(text=json.dumps({"summaries": out}))
        if prompt == "resolve_episode":
            entities, facts = asked_in(body)
            return Reply(text="\n".join(f"{item.id} new" for item in [*entities, *facts]))
        if prompt.startswith("extract_"):
            a, _, b = episode_in(body).rstrip(".").split()
            if prompt == "extract_entities":
                return Reply(text=f"{a}; {b}")
            return Reply(text=f"[{a}] knows [{b}].")
        return Reply(text=NONE)


def _env(db: Path, llm_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env.update(
        EPIGRAPH_DB=str(db), EPIGRAPH_GROUP="g", EPIGRAPH_LLM_BASE_URL=llm_url, EPIGRAPH_LLM_API_KEY=KEY,
        EPIGRAPH_LLM_MODEL="fake-model", EPIGRAPH_EMBEDDER="hash", HF_HUB_OFFLINE="1",
    )  # fmt: skip
    return env


async def _epigraph(
    env: dict[str, str], log: Path, *args: str, stdout: Any = None
) -> asyncio.subprocess.Process:
    """``epigraph --json ARGS`` as a child process, its stderr (and stdout unless given) to ``log``."""
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "epigraph", "--json", *args, env=env, stdout=stdout or out, stderr=out
        )


async def _owed(db: Path) -> tuple[list[str], str]:
    """The uuids owed, and Alice's stored summary."""
    async with EmbeddedStore(str(db)) as store:
        [alice] = (await store.entities_by_names("g", ["Alice"]))["Alice"]
        assert (await store.stats("g")).owed_summaries == len(await store.owed_summaries("g"))
        episodes = await store.episodes("g", limit=100)
        assert [e.status for e in episodes] == [EpisodeStatus.DONE] * len(MET)
        return await store.owed_summaries("g"), alice.summary


async def test_a_run_killed_in_its_batch_summary_leaves_them_owed_and_the_next_run_writes_them(
    tmp_path: Path,
) -> None:
    episodes = meetings_file(tmp_path / "episodes.jsonl", MET)
    db, log = tmp_path / "graph.db", tmp_path / "child.log"
    model = Model()
    async with FakeOpenAIServer(model, api_key=KEY) as server:
        env = _env(db, server.base_url)
        child = await _epigraph(env, log, "ingest", str(episodes))
        asked = asyncio.ensure_future(model.asked.wait())
        exited = asyncio.ensure_future(child.wait())
        await asyncio.wait([asked, exited], return_when=asyncio.FIRST_COMPLETED)
        assert model.asked.is_set(), f"the child ended before its summarize call:\n{log.read_text()}"
        child.kill()
        await exited
        assert child.returncode != 0
        model.holding = False
        model.release.set()

        owed, summary = await _owed(db)
        assert len(owed) == 1, "Alice: the one entity past composed summaries"
        assert summary != "Alice, summarized." and summary.startswith("Alice knows"), "composed, not paid"

        stats = await _epigraph(env, log, "stats", stdout=asyncio.subprocess.PIPE)
        shown, _ = await stats.communicate()
        assert stats.returncode == 0 and json.loads(shown)["owed_summaries"] == 1, "epigraph stats says so"

        extractions = model.prompts.count("extract_entities")
        resumed = await _epigraph(env, log, "ingest", str(episodes))
        assert await resumed.wait() == 0, log.read_text()

    assert model.prompts.count("extract_entities") == extractions, "the done episodes are skipped"
    assert model.prompts.count("summarize_entities") == 2, "the killed call, then the resumed run's"
    owed, summary = await _owed(db)
    assert owed == [] and summary == "Alice, summarized."


async def test_the_servers_queue_pays_what_a_group_owes_when_it_starts(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    """An episode run alone in batch mode (``add_episode`` ends no batch) leaves its summaries owed; a
    queue started on the store (the server's) resumes the group for them alone and writes them."""
    world = World(hobbies(6))
    content = next(iter(hobbies(6)))
    batch = Ingestor(store, world.llm(), embedder, IngestOptions(summaries=SummaryOptions(mode="batch")))
    await batch.add_episode(EpisodeInput(content, group_id="g", reference_time=T0))
    named = await store.entities_by_names("g", ["Ann", "Bo"])
    ann, bo = named["Ann"][0], named["Bo"][0]
    assert await store.owed_summaries("g") == sorted([ann.uuid, bo.uuid])
    assert not ann.summary.startswith("Ann: "), "composed meanwhile"

    llm = world.llm()
    server = Ingestor(store, llm, embedder)
    assert await server.start(["g", "quiet"], lambda _: None) == ["g"]
    try:
        for _ in range(2000):
            if not await store.owed_summaries("g"):
                break
            await asyncio.sleep(0.005)
    finally:
        await server.stop()
    assert await store.owed_summaries("g") == []
    assert len(llm.calls_for("summarize_entities")) == 1 and not llm.calls_for("extract_entities")
    [paid] = await store.get_entities("g", [ann.uuid])
    assert paid.summary.startswith("Ann: ")
