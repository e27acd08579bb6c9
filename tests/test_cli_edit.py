"""The ``epigraph`` commands of corrections by hand (``fact``, ``entity merge|unmerge|rename``, ``undo``,
``corrections``, ``group delete``) and of export and load, in-process (``main(argv, environ=...)``) on a
real embedded store file holding the quickstart graph. No LLM: summaries are composed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from epigraph import KnowledgeGraph
from epigraph.cli import main
from epigraph.config import Settings
from epigraph.testing import HashEmbedder
from tests.support.json_lines import error_column
from tests.support.quickstart import ingest_quickstart, quickstart_llm

OFFLINE = {"EPIGRAPH_EMBEDDER": "hash", "HF_HUB_OFFLINE": "1"}
AS_ALICE = {**OFFLINE, "EPIGRAPH_AUTHOR": "alice"}
Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store file holding the quickstart graph in group ``default``."""
    path = tmp_path / "g.db"

    async def build() -> None:
        settings = Settings(db_path=str(path))
        async with KnowledgeGraph(settings, llm=quickstart_llm(), embedder=HashEmbedder(dim=384)) as kg:
            await ingest_quickstart(kg)

    asyncio.run(build())
    return path


def run(capsys: Capsys, db: Path, *argv: str, environ: dict[str, str] = AS_ALICE) -> tuple[int, str, str]:
    code = main(["--db", str(db), *argv], environ=environ)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def fact_uuid(capsys: Capsys, db: Path, entity: str, text: str) -> str:
    code, out, err = run(capsys, db, "entity", entity, "--json")
    assert code == 0, err
    view = json.loads(out)
    facts = [f for f in view["current"] + [h["fact"] for h in view["history"]] if f["text"] == text]
    assert len(facts) == 1, text
    return str(facts[0]["uuid"])


def test_facts_are_added_edited_retired_and_deleted_with_their_author(db: Path, capsys: Capsys) -> None:
    code, _, err = run(capsys, db, "fact", "add", "Bob", "knows", "Caro", environ=OFFLINE)
    assert code == 2 and "names its author" in err and "--by" in err
    said = ("--text", "Bob has known Carol since school.", "--by", "bob", "--reason", "he said so")
    code, out, err = run(capsys, db, "fact", "add", "Bob", "knows", "Caro", "--valid-at", "2001-09-01", *said)
    assert code == 0, err
    assert out.startswith("added 'Bob has known Carol since school.'") and "by person:bob" in out
    uuid = fact_uuid(capsys, db, "Bob", "Bob has known Carol since school.")
    code, out, err = run(capsys, db, "fact", "edit", uuid, "--valid-at", "none", "--json")
    assert code == 0, err
    edited = json.loads(out)
    assert edited["operation"] == "edit_fact" and edited["after"]["facts"][0]["valid_at"] is None
    assert edited["author"] == "person:alice"  # EPIGRAPH_AUTHOR
    code, out, err = run(capsys, db, "fact", "retire", uuid, "--at", "2024-01-01")
    assert code == 0 and out.startswith("retired 'Bob has known Carol since school.' (ended 2024-01-01)"), err
    code, out, err = run(capsys, db, "fact", "delete", uuid)
    assert code == 0 and out.startswith("deleted"), err
    code, out, err = run(capsys, db, "fact", "delete", uuid)
    assert code == 1 and f"no fact '{uuid}' in group 'default'" in err
    code, out, _ = run(capsys, db, "corrections", "--entity", "Carol", "--json")
    listed = json.loads(out)
    assert [c["operation"] for c in listed] == ["delete_fact", "retire_fact", "edit_fact", "add_fact"]
    assert listed[-1]["author"] == "person:bob" and listed[-1]["reason"] == "he said so"
    code, _, err = run(capsys, db, "fact", "add", "Bob", "knows")
    assert code == 2 and "usage: epigraph fact add SOURCE RELATION TARGET (got 2 argument(s))" in err
    code, _, err = run(capsys, db, "fact", "add", "Bob", "knows", "Dave")
    assert code == 1 and "no entity 'Dave'" in err


def test_entities_are_merged_unmerged_and_renamed(db: Path, capsys: Capsys) -> None:
    code, out, err = run(capsys, db, "entity", "merge", "Globex", "Acme")
    assert code == 0 and out.startswith("merged 'Acme' into 'Globex' (2 fact(s) moved)"), err
    code, out, _ = run(capsys, db, "entity", "acme")  # the old name is an alias
    assert "Globex" in out.splitlines()[0] and "Corrections by hand" in out and "person:alice" in out
    code, out, err = run(capsys, db, "entity", "unmerge", "Globex", "--by", "bob")
    assert code == 0 and out.startswith("undid correction:"), err
    code, out, err = run(capsys, db, "entity", "rename", "Sorbonne", "La Sorbonne", "--drop-alias")
    assert code == 0 and out.startswith("renamed 'Sorbonne' to 'La Sorbonne'"), err
    code, _, err = run(capsys, db, "entity", "Sorbonne")
    assert code == 1 and "no entity 'Sorbonne'" in err
    code, out, _ = run(capsys, db, "corrections", "--json")
    rename = json.loads(out)[0]
    code, out, err = run(capsys, db, "undo", rename["uuid"])
    assert code == 0, err
    code, out, _ = run(capsys, db, "entity", "Sorbonne")
    assert code == 0
    code, _, err = run(capsys, db, "entity", "merge", "Globex")
    assert code == 2 and "usage: epigraph entity merge KEEP OTHER" in err


def test_export_load_and_group_delete(db: Path, tmp_path: Path, capsys: Capsys) -> None:
    assert run(capsys, db, "entity", "merge", "Globex", "Acme")[0] == 0
    dump = tmp_path / "graph.jsonl.gz"
    code, _, err = run(capsys, db, "export", str(dump), "--vectors")
    assert code == 0 and "wrote group 'default'" in err and "1 corrections" in err
    code, out, _ = run(capsys, db, "export")  # to stdout
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["record"] == "header" and lines[-1]["record"] == "end"
    other = tmp_path / "other.db"
    code, out, err = run(capsys, other, "load", str(dump), "--json")
    assert code == 0, err
    assert json.loads(out)["embeddings"] == "dump"
    code, out, _ = run(capsys, other, "export")
    assert [json.loads(line) for line in out.splitlines()][1:] == lines[1:]
    code, _, err = run(capsys, other, "load", str(dump))
    assert code == 1 and "'default' already hold data" in err and "(here: --into G)" in err
    code, out, err = run(capsys, other, "load", str(dump), "--into", "copy")
    assert code == 0 and "loaded group 'copy'" in out, err
    code, out, _ = run(capsys, other, "export", "--all", "--json", str(tmp_path / "all.jsonl"))
    assert sorted(json.loads(out)["counts"]) == ["copy", "default"]

    bad = tmp_path / "bad.jsonl"
    raw = list(lines)
    raw[3] = {**raw[3], "created_at": "soon"}
    bad.write_text("\n".join(json.dumps(r) for r in raw) + "\n")
    code, _, err = run(capsys, other, "--group", "fresh", "load", str(bad), "--into", "fresh")
    assert code == 2 and f"{bad}:4: " in err and "(field 'created_at')" in err
    fact_line = next(i for i, r in enumerate(raw) if r["record"] == "fact")
    raw[3], raw[fact_line] = lines[3], {**raw[fact_line], "valid_at": 12345}  # seconds since 1970?
    bad.write_text("\n".join(json.dumps(r) for r in raw) + "\n")
    code, _, err = run(capsys, other, "--group", "fresh", "load", str(bad), "--into", "fresh")
    assert code == 2 and f"{bad}:{fact_line + 1}: " in err and "(field 'valid_at')" in err, err
    assert "ISO 8601" in err
    cut = [json.dumps(r) for r in raw]
    cut[2] = cut[2][:60]  # a line cut short: its column counted without the line end (as over HTTP)
    bad.write_text("\n".join(cut) + "\n")
    code, _, err = run(capsys, other, "--group", "fresh", "load", str(bad), "--into", "fresh")
    assert code == 2 and f"{bad}:3: not JSON: " in err
    assert f"(column {error_column(cut[2])}) (the line ends before its object does" in err, err
    nowhere = tmp_path / "nowhere.jsonl"
    code, _, err = run(capsys, other, "--group", "nowhere", "export", str(nowhere))
    assert code == 1 and "no group 'nowhere' in the store" in err and "'copy'" in err
    assert not nowhere.exists(), "no empty dump written"
    code, out, _ = run(capsys, other, "--group", "fresh", "stats", "--json")
    assert json.loads(out)["episodes"] == 0

    code, _, err = run(capsys, other, "--group", "copy", "group", "delete")
    assert code == 2 and "pass --yes" in err
    code, out, _ = run(capsys, other, "--group", "copy", "group", "delete", "--yes")
    assert code == 0 and out.startswith("deleted group 'copy': 9 episodes")
    code, out, _ = run(capsys, other, "--group", "copy", "stats", "--json")
    assert json.loads(out)["entities"] == 0
