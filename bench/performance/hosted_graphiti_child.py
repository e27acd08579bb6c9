"""Graphiti's side of the hosted bench's Graphiti row, run by the Python of the Graphiti venv
(``hosted_graphiti``: graphiti-core pinned there, never imported by epigraph). Standard library and
graphiti-core only: it reads a job (JSON on stdin), ingests with Graphiti, prints one JSON line.

Job: the simulated provider's URL and key, the chat and embedding models and dimensions, Neo4j's URI
(and user and password, if any), ``semaphore`` (Graphiti's ``max_coroutines``, i.e. SEMAPHORE_LIMIT),
``mode`` (``add_episode``: each group's episodes one ``add_episode`` after another, groups at once;
``add_episode_bulk``: one ``add_episode_bulk`` call per group, groups at once), ``groups`` (group id ->
episodes: speaker, text, ISO time), ``cap_s`` (the mode stops after that long) and ``max_tokens`` (the
client's output cap; absent: its default).

Graphiti is set up as its documentation sets it up for an OpenAI-compatible endpoint:
``OpenAIGenericClient`` (chat completions with a ``json_schema`` response format; its ``max_tokens``
default, 16,384, the same cap its ``OpenAIClient`` sends), ``OpenAIEmbedder`` and
``OpenAIRerankerClient`` on the same endpoint, ``Neo4jDriver``; telemetry off.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import traceback
from datetime import datetime
from typing import Any

os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # read when graphiti_core is imported
logging.basicConfig(level=logging.WARNING)
logging.getLogger("neo4j").setLevel(logging.ERROR)  # notifications about properties not yet written


async def run(job: dict[str, Any]) -> dict[str, Any]:
    from graphiti_core import Graphiti
    from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
    from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
    from graphiti_core.llm_client.config import LLMConfig
    from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
    from graphiti_core.nodes import EpisodeType
    from graphiti_core.utils.bulk_utils import RawEpisode

    config = LLMConfig(
        api_key=job["api_key"], model=job["model"], small_model=job["model"], base_url=job["url"]
    )
    embedder = OpenAIEmbedder(
        OpenAIEmbedderConfig(
            api_key=job["api_key"],
            base_url=job["url"],
            embedding_model=job["embed_model"],
            embedding_dim=job["embed_dim"],
        )
    )
    graphiti = Graphiti(
        job["neo4j_uri"],
        job.get("neo4j_user") or "neo4j",
        job.get("neo4j_password") or "password",
        llm_client=OpenAIGenericClient(
            config=config, **({"max_tokens": job["max_tokens"]} if job.get("max_tokens") else {})
        ),
        embedder=embedder,
        cross_encoder=OpenAIRerankerClient(config=config),
        max_coroutines=job["semaphore"],
    )
    await graphiti.build_indices_and_constraints()
    done: list[float] = []
    durations: list[float] = []
    failures: list[str] = []
    failed = 0
    rate_limited = 0
    """Failed episodes whose error was Graphiti's RateLimitError (its retries spent at the limits)."""
    started = time.monotonic()

    def fail(exc: BaseException, episodes: int) -> None:
        nonlocal failed, rate_limited
        failed += episodes
        rate_limited += episodes if type(exc).__name__ == "RateLimitError" else 0
        failures.append(_describe(exc))

    async def one_group(group: str, episodes: list[dict[str, str]]) -> None:
        if job["mode"] == "add_episode_bulk":
            raw = [
                RawEpisode(
                    name=f"{group}-{i}",
                    content=f"{e['speaker']}: {e['text']}",
                    source=EpisodeType.message,
                    source_description="chat",
                    reference_time=datetime.fromisoformat(e["time"]),
                )
                for i, e in enumerate(episodes)
            ]
            began = time.monotonic()
            try:
                await graphiti.add_episode_bulk(raw, group_id=group)
            except Exception as exc:  # a failed call fails all its episodes: counted, the row goes on
                fail(exc, len(raw))
                return
            done.extend([time.monotonic()] * len(raw))
            durations.extend([(time.monotonic() - began) / len(raw)] * len(raw))
            return
        for i, e in enumerate(episodes):
            began = time.monotonic()
            try:
                await graphiti.add_episode(
                    name=f"{group}-{i}",
                    episode_body=f"{e['speaker']}: {e['text']}",
                    source=EpisodeType.message,
                    source_description="chat",
                    reference_time=datetime.fromisoformat(e["time"]),
                    group_id=group,
                )
            except Exception as exc:
                fail(exc, 1)
                continue
            done.append(time.monotonic())
            durations.append(time.monotonic() - began)

    cut = False
    try:
        async with asyncio.timeout(job["cap_s"]):
            await asyncio.gather(*(one_group(g, eps) for g, eps in job["groups"].items()))
    except TimeoutError:
        cut = True
    finished = time.monotonic()
    await graphiti.close()
    usage = graphiti.token_tracker.get_total_usage() if hasattr(graphiti, "token_tracker") else None
    return {
        "mode": job["mode"],
        "started": started,
        "finished": finished,
        "done_at": done,
        "durations": durations,
        "failed": failed,
        "failures": failures[:5],
        "failed_rate_limited": rate_limited,
        "cut": cut,
        "messages": sum(len(v) for v in job["groups"].values()),
        "tracked_input_tokens": getattr(usage, "input_tokens", None),
        "tracked_output_tokens": getattr(usage, "output_tokens", None),
    }


def _describe(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()[:400]


def main() -> None:
    job = json.loads(sys.stdin.read())
    print(json.dumps(asyncio.run(run(job))), flush=True)


if __name__ == "__main__":
    main()
