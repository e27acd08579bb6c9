"""Fixtures of the serve tests: the scripted LLM behind the local OpenAI-compatible test server, and
``epigraph serve``'s app under uvicorn on a free loopback port in a background thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.shared.serve_harness import LLMThread, World, uvicorn_thread
from epigraph.client import KnowledgeGraph
from epigraph.serve import Keys, create_app
from tests.support.served import KEYS, LIMITS, Served, graph_settings


@pytest.fixture(scope="module")
def world() -> World:
    return World()


@pytest.fixture(scope="module")
def llm(world: World) -> Iterator[LLMThread]:
    with LLMThread(world) as thread:
        yield thread


@pytest.fixture(scope="module")
def served(llm: LLMThread, world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The app with keys on, under uvicorn in a thread (its own event loop), on a free loopback port."""
    tmp = tmp_path_factory.mktemp("serve")
    kg = KnowledgeGraph(graph_settings(tmp / "graph.db", llm.url))
    app = create_app(kg, keys=Keys(KEYS), limits=LIMITS, groups_file=tmp / "graph.db.groups")
    with uvicorn_thread(app) as url:
        yield Served(url, world)
