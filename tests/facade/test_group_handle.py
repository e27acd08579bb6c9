"""The group handle (``kg.group(g)``): the same methods as the graph's own, scoped to another group; the
namespaces (corrections, overview, transfer) follow the handle's group; the facade stays small."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest

import epigraph
from epigraph import KnowledgeGraph
from epigraph.config import Settings
from epigraph.episodes.inputs import FIELDS, EpisodeFields, EpisodeInput, parse_episode_lines
from epigraph.errors import EpisodeNotFound, GroupNotFound, InputError
from epigraph.facade.corrections import Corrections
from epigraph.facade.episodes import Episodes
from epigraph.facade.forgetting import Forgettings
from epigraph.facade.group import GroupHandle
from epigraph.facade.overview import Overview
from epigraph.facade.transfer import Transfer
from epigraph.graph.embedded import EmbeddedStore
from epigraph.serve.schemas import EpisodeIn
from epigraph.testing import HashEmbedder
from epigraph.transfer import read
from tests.support.quickstart import ingest_quickstart, quickstart_llm
from tests.support.stores import DIM

PACKAGE = Path(epigraph.__file__).parent


@pytest.fixture
async def kg() -> AsyncIterator[KnowledgeGraph]:
    """The quickstart conversation in the default group ``main``; group ``bob`` is empty."""
    settings = Settings(db_path=":memory:", author="alice")
    store = EmbeddedStore(":memory:")
    async with KnowledgeGraph(
        settings, store=store, llm=quickstart_llm(), embedder=HashEmbedder(dim=DIM), group_id="main"
    ) as graph:
        await ingest_quickstart(graph)
        yield graph


async def test_the_graph_is_its_default_groups_handle(kg: KnowledgeGraph) -> None:
    main = kg.group("main")
    assert (await main.stats()) == (await kg.stats())
    assert (await main.stats()).episodes > 0
    found, again = await kg.search("where does Alice live"), await main.search("where does Alice live")
    assert [f.uuid for f in found.facts] == [f.uuid for f in again.facts] != []
    assert (await kg.entity("Alice")).to_dict() == (await main.entity("Alice")).to_dict()


async def test_another_groups_handle_sees_only_its_group(kg: KnowledgeGraph) -> None:
    bob = kg.group("bob")
    assert (await bob.stats()).episodes == 0
    assert not (await bob.search("where does Alice live")).facts
    assert await bob.episodes() == []
    (latest, *_) = await kg.episodes()
    with pytest.raises(EpisodeNotFound):
        await bob.episodes.get(latest.uuid)
    assert (await kg.episodes.get(latest.uuid)).uuid == latest.uuid
    with pytest.raises(ValueError):
        kg.group("not a group id!")


async def test_the_namespaces_follow_the_handles_group(kg: KnowledgeGraph) -> None:
    made = await kg.corrections.add_fact("Dave", "lives in", "Berlin", create=True)
    assert [c.uuid for c in await kg.corrections.history()] == [made.uuid]
    assert (await kg.corrections.get(made.uuid)).uuid == made.uuid
    assert await kg.group("bob").corrections.history() == []
    with pytest.raises(GroupNotFound):  # bob holds nothing: no empty dump of it
        _ = [line async for line in kg.group("bob").transfer.export_lines()]
    mine = [line async for line in kg.transfer.export_lines()]
    assert '"group_id": "bob"' not in "".join(mine) and '"group_id": "main"' in "".join(mine)
    assert await kg.group("bob").overview.conversations() == []


async def test_a_dump_of_one_group_loads_into_another_through_its_handle(kg: KnowledgeGraph) -> None:
    dump = [line async for line in kg.transfer.export_lines()]
    report = await kg.group("bob").transfer.load(read(dump, "dump"), into="bob")
    assert report.groups["bob"]["episode"] == (await kg.stats()).episodes
    assert (await kg.group("bob").stats()) == (await kg.stats())


def public_methods(cls: type) -> list[str]:
    """The public names a user learns; a deprecated one (``__deprecated__``, PEP 702) is on its way out
    and not counted."""
    members = inspect.getmembers(cls)
    named = [(n, v) for n, v in members if not n.startswith("_") and not hasattr(v, "__deprecated__")]
    return [n for n, v in named if callable(v) or isinstance(v, property)]


@pytest.mark.parametrize(
    "cls", [KnowledgeGraph, GroupHandle, Corrections, Overview, Transfer, Forgettings, Episodes]
)
def test_every_facade_class_has_at_most_25_public_methods(cls: type) -> None:
    assert 0 < len(public_methods(cls)) <= 25, public_methods(cls)


async def test_explain_and_the_episodes_are_the_handles_own(kg: KnowledgeGraph) -> None:
    """``kg.explain`` is a method of every handle (within the 25 names: ``kg.episode(uuid)`` became
    ``kg.episodes.get(uuid)``, the listing still ``await kg.episodes(...)``)."""
    assert "explain" in public_methods(KnowledgeGraph) and "episode" not in public_methods(KnowledgeGraph)
    (latest, *_) = await kg.episodes(limit=None)
    assert [e.uuid for e in await kg.episodes(limit=1)] == [latest.uuid]
    assert (await kg.group("main").episodes.get(latest.uuid)) == latest
    alice = await kg.explain("Alice")
    assert alice.kind == "entity" and (await kg.group("main").explain("Alice")).to_dict() == alice.to_dict()
    with pytest.raises(InputError) as blank:
        await kg.explain("  ")
    assert blank.value.field == "subject"
    with pytest.warns(DeprecationWarning, match=r"kg.episodes.get\(uuid\)"):
        assert (await kg.episode(latest.uuid)) == latest, "the old name reads, saying what replaced it"


def test_the_group_is_said_once_not_defaulted_everywhere() -> None:
    """``kg.group(g)`` replaced the ``group_id=`` argument of every method: no ``group_id or
    self.group_id`` fallback left (at most two, the issue's bar)."""
    pattern = re.compile(r"group_id or self\.group_id")
    found = [p.name for p in PACKAGE.rglob("*.py") for _ in pattern.finditer(p.read_text("utf-8"))]
    assert len(found) <= 2, found


def test_the_http_episode_is_an_episode_files_line_without_its_group() -> None:
    """One episode, one set of fields: the HTTP body is the file's line minus the group (in the path),
    and both become the same library input."""
    assert set(EpisodeIn.model_fields) == set(FIELDS) - {"group"}
    line = {"content": "I moved.", "reference_time": "2024-05-02T10:00:00Z", "kind": "message",
            "speaker": "Alice", "name": "n", "source": "chat", "id": "m-1"}  # fmt: skip
    (parsed,) = parse_episode_lines([json.dumps({**line, "group": "bob"})])
    assert isinstance(parsed, EpisodeInput)
    assert EpisodeIn.model_validate(line).to_input("bob") == dataclasses.replace(parsed, line=None)


def test_the_handles_keywords_are_the_episode_inputs_optional_fields() -> None:
    """``add_episode``'s keywords are EpisodeInput's fields (its defaults, not a second set): all but
    the content and time (named), the group (the handle's) and the line (a file's)."""
    declared = {f.name for f in dataclasses.fields(EpisodeInput)}
    assert set(EpisodeFields.__annotations__) == declared - {"content", "reference_time", "group_id", "line"}


async def test_the_handles_keywords_become_the_episode_files_input(kg: KnowledgeGraph) -> None:
    """One episode said by keywords to a handle is the episode the same file line becomes: the same
    uuid, content (``Speaker: text``), name and source; a keyword no episode has is an InputError."""
    line = {"content": "I moved.", "reference_time": "2024-05-02T10:00:00Z", "kind": "message",
            "speaker": "Alice", "name": "n", "source": "chat", "id": "m-1", "group": "bob"}  # fmt: skip
    (parsed,) = parse_episode_lines([json.dumps(line)])
    assert isinstance(parsed, EpisodeInput)
    result = await kg.group("bob").add_episode(
        "I moved.", reference_time=datetime(2024, 5, 2, 10), kind="message", speaker="Alice", name="n",
        source_description="chat", episode_id="m-1", raise_on_failure=False,
    )  # fmt: skip
    expected = parsed.to_episode()
    said = result.episode
    assert (said.uuid, said.content, said.name, said.source_description, said.reference_time) == (
        expected.uuid, expected.content, expected.name, expected.source_description, expected.reference_time,
    )  # fmt: skip
    with pytest.raises(InputError, match="place"):
        await kg.group("bob").add_episode("x", reference_time=datetime(2024, 5, 2), place="Oslo")  # type: ignore[call-arg]
