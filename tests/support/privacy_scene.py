"""The scene of the redaction tests: messages holding every kind of personal data, a careful model that
names each placeholder of a message as something its speaker shared (a fact per placeholder), and a
graph over a real SQLite file and the real ``openai`` SDK to the local test server (which records every
request body)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from epigraph import IngestOptions, KnowledgeGraph, Redaction, Settings
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.llm import OpenAIChat
from epigraph.overview import OverviewOptions
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.grammar import NONE
from epigraph.testing import HashEmbedder
from epigraph.testing.reading import asked_in, episode_in, prompt_of
from epigraph.testing.server import FakeOpenAIServer, Reply

T0 = datetime(2024, 5, 2, 9, 0, tzinfo=UTC)
PHONE, EMAIL, CARD = "+44 20 7946 0958", "dana.reyes@example.org", "4111 1111 1111 1111"
IBAN, IP, KEY = "DE89 3704 0044 0532 0130 00", "192.168.17.42", "sk-proj-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9"
SECRETS = (
    PHONE,
    "7946 0958",
    "79460958",
    EMAIL,
    CARD,
    "4111111111111111",
    IBAN,
    "DE89370400440532013000",
    IP,
    KEY,
)
MESSAGES = [
    f"Dana: my new number is {PHONE}, and mail goes to {EMAIL}.",
    f"Lee: paid with {CARD}; the refund goes to {IBAN}!",
    f"Dana: the home server is {IP} and the key is {KEY}",
    f"Lee: so Dana's phone is {PHONE}?",
]
PLACEHOLDER = re.compile(r"<[A-Z]+_\d+>")


def world(body: dict[str, Any]) -> Reply:
    """A careful model: each placeholder of the message is something its speaker shared."""
    prompt = prompt_of(body)
    if prompt == "extract_combined":
        episode = episode_in(body)
        speaker = episode.split(":", 1)[0]
        shared = dict.fromkeys(PLACEHOLDER.findall(episode))
        lines = [write_fact(f"{speaker} shared {p}.", speaker, p, "SHARED", "") for p in shared]
        return Reply("\n".join(lines) or NONE)
    if prompt == "resolve_episode":
        entities, facts = asked_in(body)
        return Reply("\n".join([*(f"{e.id} new" for e in entities), *(f"{f.id} new" for f in facts)]))
    return Reply('{"summaries": []}')


@dataclass
class Setup:
    server: FakeOpenAIServer
    path: Path

    def graph(
        self,
        *,
        redact: bool | Redaction = True,
        key: str | None = None,
        settings: dict[str, Any] | None = None,
        **options: Any,
    ) -> KnowledgeGraph:
        llm = OpenAIChat(model="fake", base_url=self.server.base_url, api_key="k")
        return KnowledgeGraph(
            Settings(redact_key=key, embedder="hash", **(settings or {})),
            store=EmbeddedStore(str(self.path)),
            llm=llm,
            embedder=HashEmbedder(dim=64),
            options=IngestOptions(mode="combined", redact=redact, **options),
            overview=OverviewOptions(communities_after_batch=False, conversations_after_batch=False),
        )

    def sent(self) -> str:
        """Every request body the model was sent, as one text."""
        return "\n".join(str(r.body) for r in self.server.requests)

    def sent_since(self, start: int) -> str:
        """The chat request bodies after the first ``start``, as one text."""
        return "\n".join(str(r.body) for r in self.server.chat_requests[start:])

    def stored(self) -> bytes:
        return stored_at(self.path)


def stored_at(path: Path) -> bytes:
    """The bytes of a SQLite store: its file, WAL and shared memory."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def inputs(group: str = "default") -> list[EpisodeInput]:
    return [
        EpisodeInput(content=text.split(": ", 1)[1], speaker=text.split(":", 1)[0],
                     reference_time=T0 + timedelta(minutes=i), group_id=group)
        for i, text in enumerate(MESSAGES)
    ]  # fmt: skip


def originals_in(data: str | bytes) -> list[str]:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [s for s in SECRETS if s in text]


@asynccontextmanager
async def scene_at(path: Path) -> AsyncIterator[Setup]:
    """The scene over the SQLite file ``path`` and a fresh test LLM server."""
    async with FakeOpenAIServer(world) as server:
        yield Setup(server, path)
