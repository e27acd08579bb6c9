"""kill -9 in the middle of a window of episodes in flight loses and duplicates nothing.

``epigraph ingest`` (``EPIGRAPH_IN_FLIGHT=4``) as a real child process over eight messages; the LLM is the
local OpenAI-compatible test server in this test's event loop. It holds the fact extraction of the fourth
message, and the child is killed (SIGKILL) once the seventh message's extraction is asked: the seventh
is run ahead only while the fourth is committed, so at that moment the first three are done and the
fourth to seventh are extracted ahead or in flight, none committed. Then: the three are done and alone
in the graph, the four are ``pending`` and still claimed by the dead process (nobody else runs them until
its claims lapse: ``EPIGRAPH_CLAIM_SECONDS``), and the same command run again skips the done ones, runs
the rest once each, and leaves the graph a run never killed leaves (compared record by record, ids
included).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import EpisodeStatus
from epigraph.prompts.grammar import NONE
from epigraph.testing.reading import asked_in, episode_in, prompt_of
from epigraph.testing.server import FakeOpenAIServer, Reply
from tests.support.group_graph import group_records as _graph
from tests.support.meetings import meetings_file

KEY = "llm-test-key-not-a-secret"
MET = ["Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan"]
HELD, KILL_AT = "Alice met Erin.", "Alice met Heidi."


class Model:
    """Answers extraction ("Alice met Bob." -> Alice, Bob, "Alice knows Bob.") and resolution (all new);
    while ``holding``, the fact extraction of ``HELD`` is not answered, and ``kill`` is set once the
    entities of ``KILL_AT`` are asked for. Counts the extractions asked, by message."""

    def __init__(self) -> None:
        self.holding = True
        self.kill = asyncio.Event()
        self.release = asyncio.Event()
        self.extracted: Counter[str] = Counter()

    async def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = prompt_of(body) or "other"
        if prompt == "resolve_episode":
            entities, facts = asked_in(body)
            return Reply(text="\n".join(f"{item.id} new" for item in [*entities, *facts]))
        if not prompt.startswith("extract_"):
            return Reply(text=NONE)
        message = episode_in(body)
        a, _, b = message.rstrip(".").split()
        if prompt == "extract_entities":
            self.extracted[message] += 1
            if message == KILL_AT and self.holding:
                self.kill.set()
            return Reply(text=f"{a}; {b}")
        if message == HELD and self.holding:
            await self.release.wait()
        return Reply(text=f"[{a}] knows [{b}].")


def _env(db: Path, llm_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env.update(
        EPIGRAPH_DB=str(db), EPIGRAPH_GROUP="g", EPIGRAPH_LLM_BASE_URL=llm_url, EPIGRAPH_LLM_API_KEY=KEY,
        EPIGRAPH_LLM_MODEL="fake-model", EPIGRAPH_EMBEDDER="hash", HF_HUB_OFFLINE="1",
        EPIGRAPH_IN_FLIGHT="4", EPIGRAPH_CLAIM_SECONDS="3",
    )  # fmt: skip
    return env


async def _ingest(env: dict[str, str], log: Path, episodes: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "epigraph",
            "--json",
            "ingest",
            str(episodes),
            env=env,
            stdout=out,
            stderr=out,
        )


async def test_kill_9_in_a_window_of_episodes_in_flight_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    episodes = meetings_file(tmp_path / "episodes.jsonl", MET)
    killed, whole, log = tmp_path / "killed.db", tmp_path / "whole.db", tmp_path / "child.log"
    model = Model()
    async with FakeOpenAIServer(model, api_key=KEY) as server:
        child = await _ingest(_env(killed, server.base_url), log, episodes)
        kill, exited = asyncio.ensure_future(model.kill.wait()), asyncio.ensure_future(child.wait())
        await asyncio.wait([kill, exited], return_when=asyncio.FIRST_COMPLETED)
        assert model.kill.is_set(), f"the child ended before the window filled:\n{log.read_text()}"
        child.kill()
        await exited
        assert child.returncode != 0

        async with EmbeddedStore(str(killed)) as store:
            status = {e.content: e.status for e in await store.episodes("g", limit=20)}
            done = [m for m in status if status[m] == EpisodeStatus.DONE]
            assert sorted(done) == [f"Alice met {n}." for n in MET[:3]], status
            in_flight = [f"Alice met {n}." for n in MET[3:7]]
            assert all(status[m] == EpisodeStatus.PENDING for m in in_flight), status
            graph = await _graph(store, "g")
            assert {m[0] for m in graph["mentions"]} == set(done), "nothing of a message not committed"
            assert len(graph["facts"]) == 3
            uuids = {e.content: e.uuid for e in await store.episodes("g", limit=20)}
            for message in in_flight:  # the dead process's claims hold until they lapse
                claim = await store.claim_episode("g", uuids[message], "another-process", 3.0)
                assert claim is not None and claim.owner != "another-process", message

        model.holding = False
        model.release.set()
        asked_before = Counter(model.extracted)
        resumed = await _ingest(_env(killed, server.base_url), log, episodes)
        assert await resumed.wait() == 0, log.read_text()
        again = model.extracted - asked_before
        assert sorted(again) == [f"Alice met {n}." for n in MET[3:]], "the done ones skipped"
        assert set(again.values()) == {1}, "each of the rest extracted once"
        reference = await _ingest(_env(whole, server.base_url), log, episodes)
        assert await reference.wait() == 0, log.read_text()

    async with EmbeddedStore(str(killed)) as store, EmbeddedStore(str(whole)) as other:
        got, expected = await _graph(store, "g"), await _graph(other, "g")
    assert [s for _, s in got["episodes"]] == [EpisodeStatus.DONE] * len(MET)
    assert len(got["facts"]) == len(MET), "one fact a message, none twice"
    assert got == expected
