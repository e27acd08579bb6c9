"""What ``epigraph ingest`` / ``import`` / ``retry`` refuse or say about their input, in-process (``main(argv,
environ=...)``) on a real embedded store file, the real OpenAI client against the local test server:
an episode id reused with other content (the store's, or an earlier line's) is refused naming the line;
an episode over the one limit (``MAX_EPISODE_CHARS``) too, before the model sees it; a line that is not
UTF-8 is named; an empty file is an error; a rerun after a killed process says what it waits for; a
retry's elapsed time is the retry's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.shared.scale_harness import CityWorld
from bench.shared.serve_harness import LLM_KEY, LLMThread
from epigraph.cli import main
from epigraph.episodes.inputs import MAX_EPISODE_CHARS, EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.testing import HashEmbedder

Capsys = pytest.CaptureFixture[str]
DIM = 384  # the hash embedder's, as the command builds it
START = datetime(2024, 5, 2, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def llm() -> Iterator[LLMThread]:
    with LLMThread(CityWorld()) as thread:
        yield thread


def env(llm: LLMThread, **extra: str) -> dict[str, str]:
    return {"EPIGRAPH_EMBEDDER": "hash", "HF_HUB_OFFLINE": "1", "EPIGRAPH_LLM_BASE_URL": llm.url,
            "EPIGRAPH_LLM_API_KEY": LLM_KEY, "EPIGRAPH_LLM_MODEL": "fake-model", **extra}  # fmt: skip


def run(capsys: Capsys, environ: dict[str, str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), environ=environ)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def line(content: str, episode_id: str | None = None, minute: int = 0) -> str:
    at = (START + timedelta(minutes=minute)).isoformat()
    given = {"id": episode_id} if episode_id else {}
    return json.dumps({"content": content, "reference_time": at, **given})


def episodes(capsys: Capsys, environ: dict[str, str], db: Path) -> list[str]:
    code, out, err = run(capsys, environ, "--db", str(db), "--json", "episodes")
    assert code == 0, err
    return sorted(e["content"] for e in json.loads(out))


def test_an_id_reused_with_other_content_is_refused_naming_the_line(
    llm: LLMThread, tmp_path: Path, capsys: Capsys
) -> None:
    db, environ = tmp_path / "g.db", env(llm)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(line("Alice moved to Paris.", "m-1") + "\n")
    assert run(capsys, environ, "--db", str(db), "ingest", str(first))[0] == 0
    second.write_text("\n".join([line("Bob moved to Oslo.", "m-2", 1), line("Alice moved to Rome.", "m-1", 2),
                                 line("Alice moved to Paris.", "m-1")]) + "\n")  # line 3: a duplicate
    code, _, err = run(capsys, environ, "--db", str(db), "ingest", str(second))
    assert code == 2, err
    assert f"{second}:2: episode id 'm-1' of group 'default' is already taken by the stored episode" in err
    assert "with other content: refused, nothing stored" in err and "nothing ingested" in err
    assert episodes(capsys, environ, db) == ["Alice moved to Paris."], "not even line 1"

    code, out, _ = run(capsys, environ, "--db", str(db), "--json", "ingest", str(second))
    (problem,) = json.loads(out)["error"]["problems"]
    assert code == 2 and problem["where"] == {"file": str(second), "line": 2, "field": "id"}

    code, out, err = run(capsys, environ, "--db", str(db), "ingest", str(second), "--skip-invalid")
    assert code == 0 and f"skipped: {second}:2: episode id 'm-1'" in err, err
    assert episodes(capsys, environ, db) == ["Alice moved to Paris.", "Bob moved to Oslo."]

    twice = tmp_path / "twice.jsonl"
    twice.write_text("\n".join([line("Carol moved to Lima.", "m-9"), line("Carol moved to Quito.", "m-9")]))
    code, _, err = run(capsys, environ, "--db", str(db), "ingest", str(twice))
    assert code == 2 and f"{twice}:2: episode id 'm-9'" in err
    assert "already taken by an earlier episode of the same input (line 1) with other content" in err


def test_an_episode_over_the_limit_is_refused_before_the_model_sees_it(
    llm: LLMThread, tmp_path: Path, capsys: Capsys
) -> None:
    long = tmp_path / "long.jsonl"
    too_long = line("a" * (MAX_EPISODE_CHARS + 1), minute=1)
    long.write_text(line("Alice moved to Paris.") + "\n" + too_long + "\n")
    calls = llm.world.calls
    code, _, err = run(capsys, env(llm), "--db", str(tmp_path / "g.db"), "ingest", str(long))
    assert code == 2
    assert f"{long}:2: at most {MAX_EPISODE_CHARS} characters, got {MAX_EPISODE_CHARS + 1}" in err
    assert "(split it into several episodes) (field 'content')" in err
    assert llm.world.calls == calls


def test_a_line_that_is_not_utf8_is_named(llm: LLMThread, tmp_path: Path, capsys: Capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(line("Alice moved to Paris.").encode() + b"\n" + b'{"content": "caf\xe9"}\n')
    code, _, err = run(capsys, env(llm), "--db", str(tmp_path / "g.db"), "ingest", str(bad))
    assert code == 2 and f"{bad}:2: not UTF-8 text (invalid continuation byte, byte 17 of the line)" in err


def test_an_empty_file_is_an_error(llm: LLMThread, tmp_path: Path, capsys: Capsys) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n# nothing here\n\n")
    code, _, err = run(capsys, env(llm), "--db", str(tmp_path / "g.db"), "ingest", str(empty))
    assert code == 2 and f"{empty}: holds no episode (every line is blank or a comment)" in err


def test_a_rerun_says_what_it_waits_for(llm: LLMThread, tmp_path: Path, capsys: Capsys) -> None:
    """A killed process's claim on an episode: the rerun waits for it to lapse, saying so, then runs it."""
    db, file = tmp_path / "g.db", tmp_path / "one.jsonl"
    file.write_text(line("Alice moved to Paris.", "m-1") + "\n")

    async def killed_midway() -> None:  # stored pending and claimed, as a process killed -9 left it
        async with EmbeddedStore(str(db)) as store:
            await store.setup(DIM)
            item = EpisodeInput("Alice moved to Paris.", START, episode_id="m-1")
            (episode,) = await Ingestor(store, None, HashEmbedder(dim=DIM)).accept([item])
            await store.claim_episode("default", episode.uuid, "killed-process", 2.0)

    asyncio.run(killed_midway())
    code, out, err = run(capsys, env(llm), "--db", str(db), "--json", "ingest", str(file))
    assert code == 0, err
    assert "(line 1) is claimed by another process (killed-process) until" in err
    assert "s from now); it runs here once the claim lapses" in err
    assert json.loads(out)["episodes"]["done"] == 1


def test_retry_reports_the_time_the_retry_took(llm: LLMThread, tmp_path: Path, capsys: Capsys) -> None:
    db, file, world = tmp_path / "g.db", tmp_path / "one.jsonl", llm.world
    file.write_text(line("Alice moved to Paris.") + "\n")
    environ = env(llm, EPIGRAPH_LLM_MAX_ATTEMPTS="1")
    world.fault = "500"
    try:
        assert run(capsys, environ, "--db", str(db), "ingest", str(file))[0] == 1
    finally:
        world.fault = None
    world.delay_s = 0.3
    try:
        code, out, err = run(capsys, environ, "--db", str(db), "--json", "retry")
    finally:
        world.delay_s = 0.0
    summary = json.loads(out)
    assert code == 0 and summary["episodes"]["done"] == 1, err
    assert summary["elapsed_s"] >= 0.3, "at least its one delayed model call"


def test_import_refuses_a_reused_id_naming_the_record(llm: LLMThread, tmp_path: Path, capsys: Capsys) -> None:
    """``epigraph import`` checks ids as ``ingest`` does (one check, ``ingestion.conflicts``)."""
    db, chat = tmp_path / "g.db", tmp_path / "chat.jsonl"
    said = ["I joined the chess club.", "I left the chess club."]
    rows = [{"id": "m1", "speaker": "Kim", "text": text, "timestamp": f"2024-02-01T18:0{i}:00Z"}
            for i, text in enumerate(said)]  # fmt: skip
    chat.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    code, _, err = run(capsys, env(llm), "--db", str(db), "import", str(chat))
    assert code == 2 and f"{chat}:2: episode id " in err
    assert "an earlier episode of the same input (line 1)" in err
    assert "1 invalid record; nothing ingested" in err
