"""The real path on a real model: the local model (``epigraph[local-model]``) ingests two tiny episodes.

``KnowledgeGraph`` starts llama.cpp's server itself (``EPIGRAPH_LLM=local``; a server that
``epigraph model start`` left running is reused and left running), the real ``OpenAIChat`` talks to it
over HTTP, and the answers are whatever Qwen2.5-Coder-1.5B writes; and ``epigraph model start|status|stop``
runs its own server. A few minutes on 2 cores.
Without the extra the test is skipped with the reason, except in CI (``CI=true``/``1``), where it fails:
``make test`` installs the extra, so a skip there would hide a broken real path.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime

import httpx
import pytest

from epigraph import KnowledgeGraph
from epigraph.cli import main
from epigraph.config import Settings
from epigraph.graph.model import EpisodeStatus
from epigraph.llm import OpenAIChat
from epigraph.local_model import LocalModel
from epigraph.testing import HashEmbedder
from tests.support.local_model import require_local_model

pytestmark = pytest.mark.live

EPISODES = [
    "Alice: I just started a new job as a designer at Acme in Paris.",
    "Bob: Congrats Alice! I teach math at the Sorbonne.",
]


def _words(text: str) -> set[str]:
    return {word.casefold() for word in re.findall(r"\w+", text)}


async def test_two_episodes_on_the_real_local_model() -> None:
    require_local_model()
    settings = Settings.from_env(llm_local=True, db_path=":memory:", llm_max_tokens=1024)
    local = LocalModel(settings)
    already_running = local.status() is not None
    when = datetime(2024, 5, 1, 12, tzinfo=UTC)
    async with KnowledgeGraph(settings, embedder=HashEmbedder(), group_id="live") as kg:
        assert isinstance(kg.llm, OpenAIChat) and kg.llm.base_url.startswith("http://127.0.0.1:")
        assert local.status() is not None
        results = [await kg.add_episode(text, reference_time=when) for text in EPISODES]
        stored = await kg.episodes(limit=10)
    spoken = _words(" ".join(EPISODES))
    for text, result in zip(EPISODES, results, strict=True):
        assert result.ok, f"{text!r} failed: {result.error}"
        report = result.report
        assert report.llm_calls >= 1 and report.input_tokens > 50 and report.output_tokens > 0
        assert sum(u.calls for u in report.per_prompt.values()) == report.llm_calls
    assert {e.status for e in stored} == {EpisodeStatus.DONE} and len(stored) == 2
    names = [e.name for r in results for e in r.entities]
    assert any(_words(name) <= spoken for name in names), f"no entity named from the text: {names}"
    if not already_running:
        assert local.status() is None and local.recorded() is None  # it stopped what it started


def test_model_start_status_stop_from_the_shell(capsys: pytest.CaptureFixture[str]) -> None:
    require_local_model()
    env = {k: v for k, v in os.environ.items() if k.startswith("EPIGRAPH_LOCAL_MODEL")}
    assert main(["--json", "model", "start"], environ=env) == 0
    started = json.loads(capsys.readouterr().out)
    assert started["running"] and started["environment"]["EPIGRAPH_LLM_BASE_URL"] == started["base_url"]
    models = httpx.get(f"{started['url']}/v1/models", timeout=10).json()
    assert started["model"] in json.dumps(models)
    assert main(["--json", "model", "status"], environ=env) == 0
    assert json.loads(capsys.readouterr().out)["pid"] == started["pid"]
    if not started["started"]:
        return  # someone's server was running already: leave it running
    assert started["detached"] and main(["model", "stop"], environ=env) == 0
    assert f"pid {started['pid']}" in capsys.readouterr().out
    assert main(["model", "status"], environ=env) == 1
