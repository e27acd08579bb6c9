"""``epigraph forget``, ``forgotten`` and ``retention``, in-process (``main(argv, environ=...)``) on a real
embedded store file holding the forgetting world (tests/support/forget_world.py). No LLM: what a model
wrote waits, and says so."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from epigraph.cli import main
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity
from epigraph.graph.store import EpisodeWrite
from epigraph.testing import HashEmbedder
from tests.support.forget_world import NEEDLES, World, build, found_in_files

OFFLINE = {"EPIGRAPH_EMBEDDER": "hash", "HF_HUB_OFFLINE": "1"}
Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def db(tmp_path: Path) -> tuple[Path, World]:
    path = tmp_path / "g.db"

    async def made() -> World:
        async with EmbeddedStore(str(path)) as store:
            await store.setup(384)
            return await build(store, "default", HashEmbedder(dim=384))

    return path, asyncio.run(made())


def run(capsys: Capsys, path: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--db", str(path), *argv], environ=OFFLINE)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_forget_previews_then_forgets_exactly_the_plan(db: tuple[Path, World], capsys: Capsys) -> None:
    path, _ = db
    code, out, err = run(capsys, path, "forget", "Zaria")
    assert code == 0, err
    assert "would forget" in out and "facts forgotten" in out and "a preview: nothing changed" in err
    code, out, _ = run(capsys, path, "forget", "Zaria", "--json")
    preview = json.loads(out)
    assert not preview["applied"] and found_in_files(path)["quillfeather"] > 0

    code, _, err = run(capsys, path, "forget", "Zaria", "--expect", preview["digest"])
    assert code == 2 and "goes with --yes" in err
    code, out, err = run(capsys, path, "forget", "Zaria", "--yes", "--expect", preview["digest"], "--json")
    assert code == 0, err
    done = json.loads(out)
    assert done["applied"] and done["ids"] == preview["ids"] and done["record"]["call"] == "cli"
    assert set(done["rebuilt"]["waiting"]) == {"conversations", "communities"}  # no LLM configured
    assert found_in_files(path) == dict.fromkeys(NEEDLES, 0)

    code, out, _ = run(capsys, path, "forgotten", "--json")
    assert [r["uuid"] for r in json.loads(out)["forgotten"]] == [done["record"]["uuid"]]
    code, out, _ = run(capsys, path, "forgotten")
    assert done["record"]["uuid"] in out and "a subject (redact)" in out
    code, _, err = run(capsys, path, "forget", "Zaria")
    assert code == 1 and "no entity" in err


def test_a_shared_name_exits_2_listing_the_ids(db: tuple[Path, World], capsys: Capsys) -> None:
    path, world = db
    other = Entity(group_id="default", name="Zaria")

    async def add() -> None:
        async with EmbeddedStore(str(path)) as store:
            await store.write_episode(EpisodeWrite(episode=world.e2, entities=[other]))

    asyncio.run(add())
    code, out, _ = run(capsys, path, "forget", "Zaria", "--json")
    failure = json.loads(out)["error"]
    assert code == 2 and failure["kind"] == "AmbiguousName"
    assert failure["candidates"] == sorted([world.zaria.uuid, other.uuid])
    code, out, err = run(capsys, path, "forget", world.zaria.uuid, "--episodes", "delete", "--yes", "--json")
    assert code == 0, err
    assert sorted(json.loads(out)["ids"]["episodes_deleted"]) == sorted([world.e1.uuid, world.e3.uuid])


def test_retention_is_set_shown_applied_and_cleared(db: tuple[Path, World], capsys: Capsys) -> None:
    path, _ = db
    code, out, _ = run(capsys, path, "retention", "show")
    assert code == 0 and "keeps everything" in out
    code, _, err = run(capsys, path, "retention", "apply")
    assert code == 1 and "no retention policy" in err
    code, _, err = run(capsys, path, "retention", "set")
    assert code == 2 and "takes DAYS" in err
    code, out, _ = run(capsys, path, "retention", "set", "30")
    assert code == 0 and "keeps its episodes 30 days" in out
    code, out, _ = run(capsys, path, "retention", "apply", "--json")
    preview = json.loads(out)
    assert not preview["applied"] and len(preview["ids"]["episodes_deleted"]) == 3  # all said in 2024
    code, out, err = run(capsys, path, "retention", "apply", "--yes", "--json")
    assert code == 0, err
    assert json.loads(out)["record"]["call"] == "cli"
    code, out, _ = run(capsys, path, "retention", "clear")
    assert code == 0
    code, out, _ = run(capsys, path, "retention", "show", "--json")
    assert json.loads(out)["retention"] is None
