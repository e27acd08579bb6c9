"""What the scale bench and the Kafka worker tests share: a scripted world in which people move between
cities (so a later episode retires an earlier fact, and the order of a group's episodes shows in the
graph), publishing episodes to Kafka, ``epigraph worker`` as real subprocesses, and a canonical dump of a
group's graph (names and times, no generated ids) to compare graphs built different ways.

The LLM is the local OpenAI-compatible test server (``serve_harness.LLMThread``) answering from the
episode's words: ``"Alice moved to Paris."`` -> entities Alice, Paris; fact ``Alice LIVES_IN Paris``;
the resolve call says a new "X lives in Y" contradicts X's other "X lives in ..." candidates.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.shared.serve_harness import LLM_KEY, World, names_in
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.model import EpisodeStatus
from epigraph.graph.store import EVERYTHING, FactFilter, GraphStore
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.publish.producer import EpisodeProducer, ensure_topic
from epigraph.testing.reading import asked_in, episode_in, prompt_of
from epigraph.testing.server import Reply

PEOPLE = ["Alice", "Bruno", "Chiara", "Dmitri"]
CITIES = ["Paris", "Lisbon", "Berlin", "Oslo", "Vienna", "Prague", "Dublin", "Madrid", "Athens", "Zurich"]
START = datetime(2024, 1, 1, tzinfo=UTC)
EXTRACTIONS = ("extract_entities", "extract_facts", "extract_combined")


class CityWorld(World):
    """The serve harness's world, with moves: one LIVES_IN fact per episode, and contradictions. An
    episode that says "Unanswerable" gets a 400 (a request the LLM refuses: the episode fails)."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        if "Unanswerable" in (current_episode(body) or ""):
            return Reply.bad_request("this request cannot be answered")
        return super().__call__(body)

    def _text(self, body: dict[str, Any], prompt: str | None, system: str, user: str) -> str:
        if prompt in ("extract_facts", "extract_combined"):
            names = names_in(episode_in(body))
            if len(names) >= 2:
                person, city = names[:2]
                return f"[{person}] lives in [{city}]."
        if prompt == "resolve_episode":
            return _resolve(body)
        return super()._text(body, prompt, system, user)


def current_episode(body: dict[str, Any]) -> str | None:
    """The text of the episode an extraction request is about (not its context), or None."""
    try:
        return episode_in(body) if prompt_of(body) in EXTRACTIONS else None
    except ValueError:
        return None


def _resolve(body: dict[str, Any]) -> str:
    """A move retires the person's other cities; everything else is new."""
    entities, facts = asked_in(body)
    lines = [f"{e.id} new" for e in entities]
    for fact in facts:
        subject = fact.text.split(" lives in ")[0] + " lives in "
        same = [i for i, c in fact.candidates.items() if c == fact.text]
        moved = [i for i, c in fact.candidates.items() if c.startswith(subject) and c != fact.text]
        lines.append(verdict_line(fact.id, same, moved))
    return "\n".join(lines)


def episodes(groups: Sequence[str], per_group: int) -> list[EpisodeInput]:
    """``per_group`` moves per group, one minute apart, interleaved across groups as a producer would
    see them; consecutive moves of one person always go to another city."""
    out: list[EpisodeInput] = []
    for i in range(per_group):
        for g, group in enumerate(groups):
            person = PEOPLE[i % len(PEOPLE)]
            city = CITIES[(i // len(PEOPLE) * 3 + g + i) % len(CITIES)]
            when = START + timedelta(minutes=i)
            text = f"{person} moved to {city}."
            out.append(EpisodeInput(text, when, group_id=group, episode_id=f"move-{i}"))
    return out


# --- Kafka ---------------------------------------------------------------------------------------------
async def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """The episode topic with ``partitions`` partitions, and its dead-letter topic (1 partition)."""
    await ensure_topic(bootstrap, topic, partitions)
    await ensure_topic(bootstrap, f"{topic}.dead", 1)


async def publish(bootstrap: str, topic: str, items: Sequence[EpisodeInput]) -> None:
    """Publish ``items`` in order through the library's producer (returns once Kafka has them all)."""
    async with EpisodeProducer(bootstrap, topic) as producer:
        await producer.publish(items)


# --- workers as subprocesses ---------------------------------------------------------------------------
def worker_env(llm_url: str, neo4j_uri: str, **extra: str) -> dict[str, str]:
    """A worker's environment: the shared Neo4j, the test LLM, the hash embedder, short LLM timeouts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env.update(
        EPIGRAPH_NEO4J_URI=neo4j_uri, EPIGRAPH_LLM_BASE_URL=llm_url, EPIGRAPH_LLM_API_KEY=LLM_KEY,
        EPIGRAPH_LLM_MODEL="fake-model", EPIGRAPH_EMBEDDER="hash", EPIGRAPH_LLM_TIMEOUT="5",
        EPIGRAPH_LLM_MAX_ATTEMPTS="3", EPIGRAPH_LLM_MAX_RETRY_SECONDS="4", HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )  # fmt: skip
    for name in ("EPIGRAPH_NEO4J_USER", "EPIGRAPH_NEO4J_PASSWORD", "EPIGRAPH_NEO4J_DATABASE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    env.update(extra)
    return env


class WorkerProcess:
    """``python -m epigraph worker`` as a subprocess logging JSON lines to ``log``; ``kill()`` is kill -9."""

    command: tuple[str, ...] = (sys.executable, "-m", "epigraph", "worker")

    def __init__(self, env: dict[str, str], log: Path, bootstrap: str, topic: str, group_id: str) -> None:
        self.env, self.log = env, log
        self.args = ["--kafka", bootstrap, "--topic", topic, "--group-id", group_id]
        self.args += ["--session-timeout", "10"]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        cmd = [*self.command, *self.args]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        return self

    def events(self, name: str) -> list[dict[str, Any]]:
        """The JSON log lines of event ``name`` this worker wrote so far."""
        found: list[dict[str, Any]] = []
        if not self.log.exists():
            return found
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("{") and f'"{name}"' in line:
                data = json.loads(line)
                if data.get("event") == name:
                    found.append(data)
        return found

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout_s: float = 30.0) -> int | None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode if self.proc is not None else None


# --- the graph -----------------------------------------------------------------------------------------
async def count_done(store: GraphStore, groups: Sequence[str]) -> int:
    total = 0
    for group in groups:
        total += len(await store.episodes(group, status=EpisodeStatus.DONE, limit=100_000))
    return total


def wait_for(predicate: Any, timeout_s: float, what: str, poll_s: float = 0.25) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(poll_s)


async def canonical(store: GraphStore, group: str) -> dict[str, Any]:
    """A group's graph without generated ids, group names or system times: episodes (time and text,
    status), entities (name, summary) and every fact, current or retired (endpoints by name, relation,
    text, event-time interval, whether retired, the episodes that support it and the one that retired
    it, each named by its time and text)."""
    eps = await store.episodes(group, limit=100_000, newest_first=False)
    label = {e.uuid: f"{e.reference_time.isoformat()} {e.content}" for e in eps}
    by_names = await store.entities_by_names(group, PEOPLE + CITIES)
    entities = {e.uuid: e for found in by_names.values() for e in found}
    facts = await store.facts_around(group, list(entities), FactFilter(time=EVERYTHING), limit=100_000)
    stats = await store.stats(group)

    def when(t: datetime | None) -> str | None:
        return t.isoformat() if t else None

    return {
        "episodes": sorted((label[e.uuid], e.status.value) for e in eps),
        "entities": sorted((e.name, e.summary) for e in entities.values()),
        "facts": sorted(
            (
                entities[f.source_uuid].name,
                f.relation,
                entities[f.target_uuid].name,
                f.text,
                when(f.valid_at),
                when(f.invalid_at),
                f.expired_at is not None,
                tuple(sorted(label[u] for u in f.episodes)),
                label[f.invalidated_by.episode_uuid] if f.invalidated_by else None,
            )
            for f in facts
        ),
        "counts": (stats.episodes, stats.entities, stats.facts, stats.current_facts, stats.mentions),
    }
