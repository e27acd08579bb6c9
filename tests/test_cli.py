"""The ``epigraph`` command, end to end: a real embedded store on a temp file, the real OpenAI client
talking HTTP to the local test server (``epigraph.testing.server``), the model-free HashEmbedder.

In-process runs call ``epigraph.cli.main(argv, environ=...)``: ``environ`` replaces ``os.environ`` as
the source of ``EPIGRAPH_*`` settings, so nothing is monkeypatched and the user's environment never
leaks in. Two runs go through a real subprocess (``python -m epigraph``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from epigraph import __version__
from epigraph.cli import main
from epigraph.cli.inputs import batched, date_arg, default_mapping_path
from epigraph.cli.tally import Tally
from epigraph.episodes.events import EpisodeDone, EpisodeFailed, EpisodeResult, EpisodeSaved
from epigraph.graph.model import Entity, Episode, EpisodeStatus, IngestReport
from epigraph.prompts.fact_lines import time_words, write_fact
from epigraph.prompts.grammar import NONE
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing.reading import asked_in, entity_name, episode_in, prompt_of, said
from epigraph.testing.server import FakeOpenAIServer, Reply

HERE = Path(__file__).resolve().parent / "cli"
EPISODES = HERE / "episodes.jsonl"
LOCOMO = HERE / "locomo_tiny.json"
API_KEY = "test-key-not-a-secret"

# ------------------------------------------------------------------------------ the scripted world

ENTITIES: dict[str, list[str]] = {
    "Alice: I live in Paris and work at Acme.": ["Alice", "Paris", "Acme"],
    "Bob: Alice is my sister. I live in Lyon.": ["Bob", "Alice", "Lyon"],
    "Alice: I moved to Berlin last month.": ["Alice", "Berlin"],
}
FACTS: dict[str, list[tuple[str, str, str, str, str]]] = {
    "Alice: I live in Paris and work at Acme.": [
        ("Alice", "Paris", "LIVES_IN", "Alice lives in Paris.", "2023-03-10T18:00:00Z"),
        ("Alice", "Acme", "WORKS_AT", "Alice works at Acme.", "2023-03-10T18:00:00Z"),
    ],
    "Bob: Alice is my sister. I live in Lyon.": [
        ("Bob", "Alice", "SIBLING_OF", "Bob is Alice's brother.", "2023-05-01T09:00:00Z"),
        ("Bob", "Lyon", "LIVES_IN", "Bob lives in Lyon.", "2023-05-01T09:00:00Z"),
    ],
    "Alice: I moved to Berlin last month.": [
        ("Alice", "Berlin", "LIVES_IN", "Alice lives in Berlin.", "2023-12-15T00:00:00Z"),
    ],
}
CONTRADICTS = {"Alice lives in Berlin.": ["Alice lives in Paris."]}
PROPOSED_MAPPING = {
    "messages": [{"role": "user", "content": "said", "speaker": "who", "timestamp": "at", "id": None}],
    "system": None,
    "records": None,
    "meta": None,
}


class World:
    """Answers the pipeline's prompts (told apart by their system message) from the tables above.
    Unknown episodes get their speaker as the only entity and no facts. ``fail`` names episode texts
    whose extraction answers HTTP 500 (with EPIGRAPH_LLM_MAX_ATTEMPTS=1 the episode fails at once)."""

    def __init__(self) -> None:
        self.fail: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You map raw dataset records"):
            return Reply(json.dumps(PROPOSED_MAPPING))
        if prompt_of(body) == "resolve_episode":
            return self._resolve_episode(body)
        if system.startswith("Write a summary"):
            entities = json.loads(user.split("Entities: ", 1)[1])
            out = [{"id": e["id"], "summary": " ".join(e["facts"][:2])} for e in entities]
            return Reply(json.dumps({"summaries": out}))
        if system.startswith("You keep the running summary"):
            return Reply("So far: " + " / ".join(user.split("New messages:\n", 1)[1].splitlines()))
        if system.startswith("Each community below"):
            found = json.loads(user.split("Communities: ", 1)[1])
            out = [{"id": c["id"], "name": " and ".join(m["name"] for m in c["members"][:2]),
                    "summary": c["members"][0]["summary"]} for c in found]  # fmt: skip
            return Reply(json.dumps({"communities": out}))
        prompt = prompt_of(body)
        assert prompt is not None, f"unexpected prompt: {system[:80]!r}"
        episode = episode_in(body)
        if any(bad in episode for bad in self.fail):
            return Reply.server_error()
        if prompt == "extract_entities":
            return Reply("; ".join(self._entities(episode)))
        lines = [write_fact(f[3], f[0], f[1], f[2], time_words(f[4])) for f in FACTS.get(episode, [])]
        if prompt == "extract_combined":
            named = {n for f in FACTS.get(episode, []) for n in f[:2]}
            lines += [f"[{n}]" for n in self._entities(episode) if n not in named]
        return Reply("\n".join(lines) or NONE)

    @staticmethod
    def _entities(episode: str) -> list[str]:
        return ENTITIES.get(episode, [episode.split(":", 1)[0]])

    @staticmethod
    def _resolve_episode(body: dict[str, Any]) -> Reply:
        entities, facts = asked_in(body)
        lines = []
        for new in entities:
            same = [i for i, c in new.candidates.items() if entity_name(c).casefold() == new.text.casefold()]
            lines.append(f"{new.id} {same[0] if same else 'new'}")
        for item in facts:
            retired = {said(t) for t in CONTRADICTS.get(item.text + ".", [])}
            lines.append(
                verdict_line(
                    item.id,
                    [i for i, c in item.candidates.items() if c == item.text],
                    [i for i, c in item.candidates.items() if c in retired],
                )
            )
        return Reply("\n".join(lines))


class ServerThread:
    """The local OpenAI-compatible server on its own event loop in a background thread, so that
    synchronous ``main()`` calls (which run their own ``asyncio.run``) and subprocesses can reach it."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.server: FakeOpenAIServer | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with FakeOpenAIServer(self.world, api_key=API_KEY) as srv:
            self.server = srv
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> ServerThread:
        self._thread.start()
        assert self._ready.wait(10), "the test server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.base_url

    def chat_requests(self) -> int:
        assert self.server is not None
        return len(self.server.chat_requests)


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ServerThread]:
    with ServerThread(World()) as srv:
        yield srv


Capsys = pytest.CaptureFixture[str]
OFFLINE = {"EPIGRAPH_EMBEDDER": "hash", "HF_HUB_OFFLINE": "1"}


def llm_env(srv: ServerThread, **extra: str) -> dict[str, str]:
    return {
        **OFFLINE,
        "EPIGRAPH_LLM_BASE_URL": srv.url,
        "EPIGRAPH_LLM_MODEL": "fake-model",
        "EPIGRAPH_LLM_API_KEY": API_KEY,
        **extra,
    }


def run(capsys: Capsys, argv: list[str], environ: dict[str, str]) -> tuple[int, str, str]:
    code = main(argv, environ=environ)
    captured = capsys.readouterr()
    assert API_KEY not in captured.out + captured.err, "the API key was printed"
    return code, captured.out, captured.err


def row(table: str, label: str) -> int:
    """The number on the summary-table row whose label starts with ``label``."""
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"[│|┃]", line) if c.strip()]
        if len(cells) == 2 and cells[0].startswith(label):
            return int(cells[1].replace(",", ""))
    raise AssertionError(f"no row {label!r} in:\n{table}")


@pytest.fixture(scope="module")
def graph_db(llm_server: ServerThread, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the three episodes ingested (read-only for the tests that use it)."""
    db = tmp_path_factory.mktemp("graph") / "graph.db"
    assert main(["--db", str(db), "ingest", str(EPISODES)], environ=llm_env(llm_server)) == 0
    return db


# ------------------------------------------------------------------------------------------- ingest


def test_ingest_prints_a_summary_that_matches_what_was_done(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    db = tmp_path / "g.db"
    before = llm_server.chat_requests()
    code, out, err = run(capsys, ["--db", str(db), "ingest", str(EPISODES)], llm_env(llm_server))
    assert code == 0, err
    assert f"ingested {EPISODES} into group 'default'" in out
    assert row(out, "episodes done") == 3
    assert row(out, "episodes failed") == 0
    assert row(out, "entities") == 6  # Alice, Paris, Acme, Bob, Lyon, Berlin
    assert row(out, "facts") == 5
    assert row(out, "invalidations") == 1  # Alice lives in Paris -> Berlin
    assert row(out, "LLM calls") == llm_server.chat_requests() - before
    assert row(out, "tokens in") > row(out, "tokens out") > 0
    assert row(out, "embedding requests") > 0

    # idempotent: the same file again changes nothing and costs nothing
    code, out, _ = run(capsys, ["--db", str(db), "--json", "ingest", str(EPISODES)], llm_env(llm_server))
    summary = json.loads(out)
    assert code == 0
    assert summary["episodes"] == {"done": 0, "failed": 0, "skipped": 3, "invalid": 0}
    assert summary["llm_calls"] == 0


def test_ingest_json_and_combined_mode(llm_server: ServerThread, tmp_path: Path, capsys: Capsys) -> None:
    argv = ["ingest", str(EPISODES), "--mode", "combined", "--json", "--db", str(tmp_path / "g.db")]
    code, out, err = run(capsys, argv, llm_env(llm_server))
    assert code == 0, err
    summary = json.loads(out)
    assert summary["episodes"]["done"] == 3
    assert (summary["entities"], summary["facts"], summary["invalidations"]) == (6, 5, 1)
    assert summary["group_ids"] == ["default"] and summary["file"] == str(EPISODES)
    assert summary["input_tokens"] > 0 and summary["failures"] == []


def test_a_bad_line_stops_everything_before_anything_is_ingested(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    bad = tmp_path / "bad.jsonl"
    good = EPISODES.read_text().splitlines()
    bad.write_text(
        "\n".join([good[0], '{"content": "hi", "kind": "letter", "reference_time": "2024-01-01"}'])
    )
    db = tmp_path / "g.db"
    before = llm_server.chat_requests()
    code, _, err = run(capsys, ["--db", str(db), "ingest", str(bad)], llm_env(llm_server))
    assert code == 2
    assert f"{bad}:2: must be one of message, text, json, got 'letter' (field 'kind')" in err
    assert "nothing ingested" in err and "Traceback" not in err
    assert llm_server.chat_requests() == before
    assert not db.exists(), "the store was not even opened"

    # under --json the same failure, each problem with where it is, on stdout
    code, out, err = run(capsys, ["--db", str(db), "ingest", str(bad), "--json"], llm_env(llm_server))
    error = json.loads(out)["error"]
    assert code == error["exit_code"] == 2
    assert (error["kind"], error["invalid"]) == ("InputError", 1)
    assert error["message"].startswith("1 invalid line; nothing ingested") and "nothing ingested" in err
    [problem] = error["problems"]
    assert problem["where"] == {"file": str(bad), "line": 2, "field": "kind"}
    assert problem["message"] == "must be one of message, text, json, got 'letter'"


def test_skip_invalid_reports_bad_lines_and_ingests_the_rest(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    mixed = tmp_path / "mixed.jsonl"
    lines = EPISODES.read_text().splitlines()
    mixed.write_text("\n".join([lines[0], '{"content": "no time"}', "not json", lines[1]]) + "\n")
    argv = ["--db", str(tmp_path / "g.db"), "ingest", str(mixed), "--skip-invalid"]
    code, out, err = run(capsys, argv, llm_env(llm_server))
    assert code == 0, err
    assert f"skipped: {mixed}:2: missing" in err and "(field 'reference_time')" in err
    assert f"skipped: {mixed}:3: not valid JSON" in err
    assert row(out, "episodes done") == 2
    assert row(out, "invalid input skipped") == 2


def test_groups_come_from_the_line_or_the_group_option(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    db = tmp_path / "g.db"
    episodes = tmp_path / "groups.jsonl"
    lines = EPISODES.read_text().splitlines()
    episodes.write_text(lines[0] + "\n" + lines[1].replace('"source"', '"group": "bob", "source"') + "\n")
    code, out, err = run(
        capsys, ["--db", str(db), "--group", "alice", "ingest", str(episodes)], llm_env(llm_server)
    )
    assert code == 0, err
    assert f"ingested {episodes} into groups 'alice', 'bob'" in out
    for group in ("alice", "bob"):
        _, out, _ = run(capsys, ["--db", str(db), "stats", "--json", "--group", group], OFFLINE)
        assert json.loads(out)["episodes"] == 1


def test_ingest_without_an_llm_names_the_variables(tmp_path: Path, capsys: Capsys) -> None:
    code, _, err = run(capsys, ["--db", str(tmp_path / "g.db"), "ingest", str(EPISODES)], OFFLINE)
    assert code == 2
    assert "EPIGRAPH_LLM_MODEL" in err and "EPIGRAPH_LLM_BASE_URL" in err and "EPIGRAPH_LLM_API_KEY" in err
    assert not (tmp_path / "g.db").exists()


def test_a_missing_file_is_a_usage_error(llm_server: ServerThread, capsys: Capsys) -> None:
    code, _, err = run(capsys, ["--db", ":memory:", "ingest", "nope.jsonl"], llm_env(llm_server))
    assert (code, err.strip()) == (2, "epigraph: nope.jsonl: no such file")


def test_failed_episodes_are_reported_and_retried(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    db = tmp_path / "g.db"
    episodes = tmp_path / "e.jsonl"
    episodes.write_text(
        '{"content": "Hello there.", "speaker": "Carol", "reference_time": "2024-02-01"}\n'
        '{"content": "Boom goes the model.", "speaker": "Dan", "reference_time": "2024-02-02"}\n'
    )
    env = llm_env(llm_server, EPIGRAPH_LLM_MAX_ATTEMPTS="1")
    llm_server.world.fail.add("Boom goes")
    try:
        code, out, err = run(capsys, ["--db", str(db), "ingest", str(episodes)], env)
    finally:
        llm_server.world.fail.clear()
    assert code == 1
    assert (row(out, "episodes done"), row(out, "episodes failed")) == (1, 1)
    assert re.search(r"failed: line 2, episode [0-9a-f-]{36}: LLMUnavailable", err), err
    assert "epigraph retry" in err

    code, out, _ = run(capsys, ["--db", str(db), "episodes", "--status", "failed", "--json"], OFFLINE)
    [failed] = json.loads(out)
    assert failed["content"] == "Dan: Boom goes the model." and failed["error"]

    code, out, err = run(capsys, ["--db", str(db), "retry"], env)
    assert code == 0, err
    assert (row(out, "episodes done"), row(out, "episodes failed")) == (1, 0)
    code, out, _ = run(capsys, ["--db", str(db), "retry"], env)
    assert "nothing to retry in group 'default'" in out


def test_a_wrong_api_key_never_shows_up_in_the_output(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    secret = "sk-wrong-key-0123456789"
    env = llm_env(llm_server, EPIGRAPH_LLM_API_KEY=secret)
    code = main(["--db", str(tmp_path / "g.db"), "ingest", str(EPISODES)], environ=env)
    captured = capsys.readouterr()
    assert code == 1
    assert secret not in captured.out + captured.err
    assert row(captured.out, "episodes failed") == 3


# ------------------------------------------------------------------------------------------- import


def test_import_dry_run_needs_no_llm(tmp_path: Path, capsys: Capsys) -> None:
    db = tmp_path / "g.db"
    code, out, err = run(capsys, ["--db", str(db), "import", str(LOCOMO), "--dry-run"], OFFLINE)
    assert code == 0, err
    assert out.startswith(f"5 message episodes from 1 record of {LOCOMO}")
    assert "speakers: Mia 3, Noah 2" in out
    assert "Mia: Noah! I finally finished my first marathon." in out
    assert not db.exists(), "a dry run does not touch the store"

    argv = ["import", str(LOCOMO), "--dry-run", "--json", "--limit", "2", "--show-mapping", "--group", "g2"]
    code, out, err = run(capsys, argv, OFFLINE)
    report = json.loads(out)
    assert (report["episodes"], report["speakers"], report["group_id"]) == (2, {"Mia": 1, "Noah": 1}, "g2")
    assert report["mapping_origin"] == "detected: locomo"
    assert "mapping for" in err  # with --json the mapping goes to stderr


def test_import_ingests_through_the_mapping(llm_server: ServerThread, tmp_path: Path, capsys: Capsys) -> None:
    db = tmp_path / "g.db"
    saved = tmp_path / "m.json"
    argv = ["--db", str(db), "import", str(LOCOMO), "--group", "locomo", "--save-mapping", str(saved)]
    code, out, err = run(capsys, argv, llm_env(llm_server))
    assert code == 0, err
    assert f"imported {LOCOMO} into group 'locomo'" in out
    assert row(out, "episodes done") == 5
    assert json.loads(saved.read_text())["description"] == "detected: locomo"
    code, out, _ = run(capsys, ["--db", str(db), "--group", "locomo", "stats", "--json"], OFFLINE)
    assert json.loads(out)["episodes"] == 5


def test_import_takes_the_extraction_mode(llm_server: ServerThread, tmp_path: Path, capsys: Capsys) -> None:
    assert llm_server.server is not None
    before = len(llm_server.server.chat_requests)
    argv = ["--db", str(tmp_path / "g.db"), "import", str(LOCOMO), "--mode", "combined", "--json"]
    code, out, err = run(capsys, argv, llm_env(llm_server))
    assert code == 0, err
    assert json.loads(out)["episodes"]["done"] == 5
    asked = [prompt_of(r.body) for r in llm_server.server.chat_requests[before:]]
    extraction = [p for p in asked if p and p.startswith("extract")]
    assert extraction == ["extract_combined"] * 5, "one combined call a turn, no separate-mode calls"


def test_a_proposed_mapping_is_shown_saved_and_reused(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"who": "Ann", "said": "I love green tea.", "at": "2024-01-01T10:00:00Z"}\n'
        '{"who": "Ben", "said": "I prefer coffee.", "at": "2024-01-01T10:01:00Z"}\n'
    )
    code, out, err = run(capsys, ["import", str(chat), "--dry-run"], llm_env(llm_server))
    assert code == 0, err
    assert "proposed by the LLM" in out and '"content": "said"' in out  # shown
    saved = tmp_path / "chat.mapping.json"
    assert f"saved the mapping to {saved}" in err and saved.is_file()

    code, out, err = run(capsys, ["import", str(chat), "--dry-run"], OFFLINE)  # no LLM needed now
    assert code == 0, err
    assert f"using the mapping saved in {saved}" in err
    assert "2 message episodes" in out and "speakers: Ann 1, Ben 1" in out

    db = tmp_path / "g.db"
    before = llm_server.chat_requests()
    code, out, err = run(capsys, ["--db", str(db), "import", str(chat)], llm_env(llm_server))
    assert code == 0, err
    assert row(out, "episodes done") == 2
    assert llm_server.chat_requests() - before == row(out, "LLM calls")  # no new proposal


def test_import_of_an_unknown_shape_without_an_llm_says_what_to_do(tmp_path: Path, capsys: Capsys) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"a": 1, "b": {"c": 2}}\n')
    code, _, err = run(capsys, ["import", str(odd), "--dry-run"], OFFLINE)
    assert code == 2
    assert "no known format recognised" in err and "--mapping" in err


# ------------------------------------------------------------------------------------ search & read


def test_search_shows_current_facts_by_default(graph_db: Path, capsys: Capsys) -> None:
    code, out, err = run(capsys, ["--db", str(graph_db), "search", "where does Alice live"], OFFLINE)
    assert code == 0, err
    assert out.startswith("'where does Alice live' in default [COMBINED]")
    facts = facts_table(out)
    assert "Alice lives in Berlin." in facts and "Alice lives in Paris." not in facts

    code, out, _ = run(
        capsys, ["search", "Alice live", "--db", str(graph_db), "--as-of", "2023-06-01"], OFFLINE
    )
    assert "(as of 2023-06-01)" in out.splitlines()[0]
    facts = facts_table(out)
    assert "Alice lives in Paris." in facts and "Alice lives in Berlin." not in facts


def test_search_as_of_a_date_lists_no_episode_said_later(graph_db: Path, capsys: Capsys) -> None:
    """Time travel shows what was said by then: the 2024 message is among the episodes of a search
    without a date, not of one as of 2023-06-01 (its fact was hidden already)."""
    argv = ["--db", str(graph_db), "--json", "search", "Alice moved to Berlin", "--recipe", "episodes_hybrid"]
    code, out, err = run(capsys, argv, OFFLINE)
    assert code == 0, err
    said = {r["episode"]["content"]: r["episode"]["reference_time"] for r in json.loads(out)["episodes"]}
    assert said["Alice: I moved to Berlin last month."].startswith("2024-01-15")
    code, out, err = run(capsys, [*argv, "--as-of", "2023-06-01"], OFFLINE)
    assert code == 0, err
    said = {r["episode"]["content"]: r["episode"]["reference_time"] for r in json.loads(out)["episodes"]}
    assert said and all(at < "2023-06-01" for at in said.values()), said
    code, out, _ = run(capsys, [*argv, "--known-at", "2023-06-01"], OFFLINE)  # stored in 2026: none known
    assert json.loads(out)["episodes"] == []


def test_entity_as_of_a_date_shows_it_as_it_was_then(graph_db: Path, tmp_path: Path, capsys: Capsys) -> None:
    """``entity NAME --as-of DATE``: the facts current then as current, a fact starting later absent,
    one ended by then as history, and the episodes said by then."""

    def view(*extra: str) -> dict[str, Any]:
        code, out, err = run(capsys, ["--db", str(graph_db), "--json", "entity", "Alice", *extra], OFFLINE)
        assert code == 0, err
        return dict(json.loads(out))

    def texts(facts: list[dict[str, Any]]) -> set[str]:
        return {f["fact"]["text"] if "fact" in f else f["text"] for f in facts}

    now = view()
    assert "Alice lives in Berlin." in texts(now["current"]) and now["as_of"] is None
    assert "Alice lives in Paris." in texts(now["history"])
    then = view("--as-of", "2023-06-01")
    assert then["as_of"].startswith("2023-06-01")
    assert "Alice lives in Paris." in texts(then["current"])
    assert "Alice lives in Berlin." not in texts(then["current"]) | texts(then["history"])  # begins later
    assert then["episodes"] and all(e["reference_time"] < "2023-06-01" for e in then["episodes"])
    later = view("--as-of", "2024-02-01")
    assert "Alice lives in Berlin." in texts(later["current"])
    assert "Alice lives in Paris." in texts(later["history"]) - texts(later["current"])
    code, out, _ = run(capsys, ["--db", str(graph_db), "entity", "Alice", "--as-of", "2023-06-01"], OFFLINE)
    assert code == 0 and "as of 2023-06-01" in out
    page = tmp_path / "alice.html"
    argv = ["--db", str(graph_db), "entity", "Alice", "--as-of", "2023-06-01", "--html", str(page)]
    assert run(capsys, argv, OFFLINE)[0] == 0
    data = page.read_text().split('<script id="epigraph-data" type="application/json">', 1)[1]
    assert json.loads(data.split("</script>", 1)[0])["as_of"] == "2023-06-01T00:00:00+00:00", "slider then"


def facts_table(out: str) -> str:
    """The Facts table of a search's output (entities and episodes follow it)."""
    return out.split("Facts", 1)[1].split("Entities", 1)[0]


def test_search_json_for_scripts(graph_db: Path, capsys: Capsys) -> None:
    argv = ["--db", str(graph_db), "--json", "search", "Alice lives", "--include-retired"]
    argv += ["--recipe", "facts_hybrid"]
    code, out, _ = run(capsys, argv, OFFLINE)
    result = json.loads(out)
    assert code == 0 and result["recipe"] == "FACTS_HYBRID" and result["include_retired"] is True
    texts = {r["fact"]["text"] for r in result["facts"]}
    assert {"Alice lives in Paris.", "Alice lives in Berlin."} <= texts
    paris = next(r["fact"] for r in result["facts"] if r["fact"]["text"] == "Alice lives in Paris.")
    assert paris["invalid_at"].startswith("2023-12-15")


def test_bad_arguments_are_usage_errors(graph_db: Path, capsys: Capsys) -> None:
    code, _, err = run(capsys, ["--db", str(graph_db), "search", "x", "--as-of", "yesterday"], OFFLINE)
    assert code == 2 and "not an ISO date or datetime: 'yesterday'" in err
    code, _, err = run(capsys, ["search", "x", "--recipe", "nope"], OFFLINE)
    assert code == 2 and "unknown recipe 'nope'" in err
    code, _, err = run(capsys, ["--group", "no spaces allowed", "stats"], OFFLINE)
    assert code == 2 and "group_id must be" in err


def test_entity_shows_facts_history_and_episodes(graph_db: Path, tmp_path: Path, capsys: Capsys) -> None:
    page = tmp_path / "alice.html"
    code, out, err = run(capsys, ["--db", str(graph_db), "entity", "Alice", "--html", str(page)], OFFLINE)
    assert code == 0, err
    current, history = out.split("History (retired facts)")
    assert "Alice lives in Berlin." in current and "Alice lives in Paris." not in current
    assert "Alice lives in Paris." in history and "Alice lives in Berlin." in history  # retired by
    assert "I moved to Berlin" in history  # ... in that episode
    assert "Episodes mentioning it (3)" in out
    html = page.read_text()  # the interactive view: Cytoscape.js inlined, the facts with both time axes
    assert html.startswith("<!DOCTYPE html>") and "cytoscape" in html and "<svg" not in html
    assert '"text":"Alice lives in Paris."' in html and '"expired_at":"' in html
    assert f"wrote {page} (the interactive view" in err

    svg = tmp_path / "alice.svg"
    code, out, _ = run(
        capsys, ["--db", str(graph_db), "entity", "Alice", "--json", "--svg", str(svg)], OFFLINE
    )
    view = json.loads(out)
    [retired] = view["history"]
    assert retired["fact"]["text"] == "Alice lives in Paris."
    assert retired["by_fact"]["text"] == "Alice lives in Berlin."
    assert retired["by_episode"]["content"] == "Alice: I moved to Berlin last month."
    assert svg.read_text().startswith("<svg")


def test_entity_html_without_a_file_writes_name_dot_html(
    graph_db: Path, tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, ["--db", str(graph_db), "entity", "Alice", "--html"], OFFLINE)
    assert code == 0, err
    assert "wrote Alice.html" in err and "cytoscape" in (tmp_path / "Alice.html").read_text()


def test_an_unknown_entity_suggests_the_closest_names(graph_db: Path, capsys: Capsys) -> None:
    code, out, err = run(capsys, ["--db", str(graph_db), "entity", "Alise"], OFFLINE)
    assert code == 1 and out == ""
    assert err.startswith("epigraph: no entity 'Alise' in group 'default'; closest names: Alice")
    assert len(err.strip().splitlines()) == 1


def test_episodes_and_stats(graph_db: Path, capsys: Capsys) -> None:
    code, out, _ = run(capsys, ["--db", str(graph_db), "episodes", "--json"], OFFLINE)
    episodes = json.loads(out)
    assert code == 0 and [e["name"] for e in episodes] == ["Alice", "Bob", "Alice"]  # newest first
    assert {e["status"] for e in episodes} == {"done"} and episodes[0]["report"]["llm_calls"] > 0

    argv = ["--db", str(graph_db), "episodes", "--since", "2023-04-01", "--until", "2024-01-01", "--json"]
    code, out, _ = run(capsys, argv, OFFLINE)
    assert [e["content"] for e in json.loads(out)] == ["Bob: Alice is my sister. I live in Lyon."]

    code, out, _ = run(capsys, ["--db", str(graph_db), "episodes"], OFFLINE)
    assert "Episodes in 'default' (3)" in out and "Alice: I moved to Berlin last month." in out

    code, out, _ = run(capsys, ["--db", str(graph_db), "stats", "--json"], OFFLINE)
    stats = json.loads(out)
    assert (stats["episodes"], stats["entities"], stats["facts"], stats["current_facts"]) == (3, 6, 5, 4)
    assert stats["failed_episodes"] == 0 and stats["db"] == str(graph_db)

    code, out, _ = run(capsys, ["--db", str(graph_db), "stats"], OFFLINE)
    assert row(out, "current facts") == 4


def test_changes_in_a_window_by_kind_grouped_by_entity(graph_db: Path, capsys: Capsys) -> None:
    argv = ["--db", str(graph_db), "changes", "--since", "2023-12-01", "--until", "2024-01-01", "--json"]
    code, out, _ = run(capsys, argv, OFFLINE)
    changed = json.loads(out)
    by_kind: dict[str, set[str]] = {}
    for entity in changed["entities"]:
        for change in entity["changes"]:
            by_kind.setdefault(change["kind"], set()).add(change["fact"]["text"])
    # said in January 2024 of "last month": Berlin began and Paris ended in December 2023 (event time)
    assert code == 0
    assert by_kind == {"started": {"Alice lives in Berlin."}, "ended": {"Alice lives in Paris."}}
    code, out, _ = run(capsys, ["--db", str(graph_db), "changes", "--kind", "retired", "--json"], OFFLINE)
    (retired,) = {c["fact"]["text"]: c for e in json.loads(out)["entities"] for c in e["changes"]}.values()
    assert retired["fact"]["text"] == "Alice lives in Paris." and retired["axis"] == "system"
    assert retired["retired_by"]["episode"]["reference_time"] == "2024-01-15T20:00:00+00:00"
    code, out, _ = run(capsys, ["--db", str(graph_db), "changes", "--until", "2023-04-01"], OFFLINE)
    assert code == 0 and "What changed in 'default' from the beginning until 2023-04-01" in out
    assert "Alice lives in Paris." in out and "started (event)" in out
    code, _, err = run(capsys, ["--db", str(graph_db), "changes", "--kind", "moved"], OFFLINE)
    assert code == 2 and "invalid choice: 'moved'" in err


def test_conversations_list_and_show_their_episodes_in_order(graph_db: Path, capsys: Capsys) -> None:
    """The ingestion folded the file's three turns (source "chat") into the conversation's summary."""
    code, out, _ = run(capsys, ["--db", str(graph_db), "conversations", "--json"], OFFLINE)
    (chat,) = json.loads(out)["conversations"]
    assert code == 0 and (chat["key"], chat["episodes"], chat["unsummarized"]) == ("chat", 3, 0)
    assert chat["summary"]["summary"].startswith("So far: [2023-03-10] Alice: I live in Paris")
    code, out, _ = run(capsys, ["--db", str(graph_db), "conversations", "chat", "--json"], OFFLINE)
    one = json.loads(out)
    assert [e["content"][:5] for e in one["episodes"]] == ["Alice", "Bob: ", "Alice"]
    assert one["episodes"][1]["previous"] == one["episodes"][0]["uuid"]
    assert one["episodes"][0]["next"] == one["episodes"][1]["uuid"] and one["episodes"][2]["next"] is None
    code, out, _ = run(capsys, ["--db", str(graph_db), "conversations"], OFFLINE)
    assert code == 0 and "chat" in out and "So far:" in out
    code, out, err = run(capsys, ["--db", str(graph_db), "conversations", "nothing"], OFFLINE)
    assert code != 0 and "no conversation 'nothing'" in out + err
    missing = graph_db.parent / "missing.db"
    for command in ("conversations", "communities"):
        code, out, err = run(capsys, ["--db", str(missing), command], OFFLINE)
        assert code == 1 and not missing.exists()  # a reading command never creates a store


def test_communities_are_built_on_request_and_viewed_as_of_a_date(
    graph_db: Path, llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    db = tmp_path / "copy.db"
    shutil.copyfile(graph_db, db)
    code, out, _ = run(capsys, ["--db", str(db), "communities"], OFFLINE)
    assert code == 0 and "(none)" in out and "--rebuild" in out
    code, out, err = run(capsys, ["--db", str(db), "communities", "--update"], OFFLINE)
    assert code != 0 and "needs an LLM" in out + err
    code, out, err = run(capsys, ["--db", str(db), "communities", "--rebuild", "--json"], llm_env(llm_server))
    built = json.loads(out)
    assert code == 0, err
    assert built["update"]["rebuilt"] and built["update"]["llm_calls"] == 1
    names = {m["name"] for c in built["communities"] for m in c["members"]}
    assert names <= {"Alice", "Paris", "Acme", "Bob", "Lyon", "Berlin"} and "Alice" in names
    assert all(c["stored"] and c["summary"] for c in built["communities"])
    argv = ["--db", str(db), "communities", "--as-of", "2023-04-01", "--json"]
    code, out, _ = run(capsys, argv, OFFLINE)
    early = {m["name"] for c in json.loads(out)["communities"] for m in c["members"]}
    assert code == 0 and early <= {"Alice", "Paris", "Acme"}  # Bob, Lyon and Berlin came later
    code, out, _ = run(capsys, ["--db", str(db), "communities"], OFFLINE)
    assert code == 0 and "Alice" in out


def test_remove_brings_back_the_facts_an_episode_retired(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys
) -> None:
    db = tmp_path / "g.db"
    assert run(capsys, ["--db", str(db), "ingest", str(EPISODES)], llm_env(llm_server))[0] == 0
    _, out, _ = run(capsys, ["--db", str(db), "episodes", "--since", "2024-01-01", "--json"], OFFLINE)
    [moved] = json.loads(out)
    code, out, err = run(capsys, ["--db", str(db), "remove", moved["uuid"]], llm_env(llm_server))
    assert code == 0, err
    assert out.startswith(f"removed episode {moved['uuid']}: 1 facts removed, 1 restored")
    _, out, _ = run(capsys, ["--db", str(db), "search", "Alice lives"], OFFLINE)
    assert "Alice lives in Paris." in out and "Alice lives in Berlin." not in out
    code, _, err = run(capsys, ["--db", str(db), "remove", moved["uuid"]], llm_env(llm_server))
    assert code == 1 and f"no episode '{moved['uuid']}'" in err


# ------------------------------------------------------------------------------------ pure helpers


def _result(
    content: str, *, ok: bool = True, calls: int = 1, entities: tuple[str, ...] = ()
) -> EpisodeResult:
    episode = Episode(
        group_id="g",
        content=content,
        reference_time=datetime(2024, 1, 1, tzinfo=UTC),
        status=EpisodeStatus.DONE if ok else EpisodeStatus.FAILED,
        error=None if ok else "LLMUnavailable: down",
        report=IngestReport(llm_calls=calls, input_tokens=10 * calls, output_tokens=calls),
    )
    return EpisodeResult(episode=episode, entities=[Entity(uuid=u, group_id="g", name=u) for u in entities])


def test_the_tally_counts_each_episode_once_by_its_last_result() -> None:
    tally = Tally()
    tally.begin_batch([1, 2])
    first, second = _result("a", entities=("x",)), _result("b", ok=False)
    assert tally.event(EpisodeSaved("g", first.episode.uuid, 0)) is False
    assert tally.event(EpisodeDone("g", first.episode.uuid, 0, result=first)) is True
    assert tally.event(EpisodeFailed("g", second.episode.uuid, 1, error="down", result=second)) is True
    # the group's batched summary refresh re-sends its last episode with the summary cost added
    refreshed = _result("a", calls=3, entities=("x", "y"))
    assert tally.event(EpisodeDone("g", first.episode.uuid, 0, result=refreshed)) is False
    tally.begin_batch([7])  # the next batch's indexes start at 0 again
    tally.event(EpisodeDone("g", "c", 0, result=_result("c", entities=("x",))))
    tally.end_batch()
    summary = tally.to_dict()
    assert summary["episodes"] == {"done": 2, "failed": 1, "skipped": 0, "invalid": 0}
    assert (summary["llm_calls"], summary["input_tokens"], summary["entities"]) == (5, 50, 2)
    assert summary["failures"] == [{"uuid": second.episode.uuid, "line": 2, "error": "LLMUnavailable: down"}]


def test_input_helpers() -> None:
    assert [len(b) for b in batched(range(1001), 500)] == [500, 500, 1]
    assert list(batched([], 3)) == []
    assert date_arg("2024-05-02") == datetime(2024, 5, 2, tzinfo=UTC)
    assert date_arg("2024-05-02T12:00:00+02:00") == datetime(2024, 5, 2, 10, tzinfo=UTC)
    assert default_mapping_path(Path("/d/chats.json")) == Path("/d/chats.mapping.json")
    assert default_mapping_path(Path("/d/chats.jsonl.gz")) == Path("/d/chats.mapping.json")


# --------------------------------------------------------------------------- a store that is not there


@pytest.mark.parametrize(
    "command",
    [["search", "x"], ["entity", "Alice"], ["episodes"], ["stats"], ["remove", "some-uuid"], ["retry"],
     ["ask", "where does Alice live?"]],
    ids=lambda c: c[0],
)  # fmt: skip
def test_a_command_that_reads_a_missing_store_fails_and_creates_nothing(
    llm_server: ServerThread, tmp_path: Path, capsys: Capsys, command: list[str]
) -> None:
    """A mistyped --db used to become an empty 150 kB graph, "nothing found" and exit 0."""
    missing = tmp_path / "notes.db"
    code, out, err = run(capsys, [*command, "--db", str(missing)], llm_env(llm_server))
    assert code == 1 and out == ""
    assert err.strip() == (
        f"epigraph: no epigraph store at {str(missing)!r}: nothing was created (check --db / "
        "EPIGRAPH_DB; ingesting into a new path creates it)"
    )
    assert list(tmp_path.iterdir()) == [], "no file at all, not even a journal"


def test_without_db_the_default_store_is_not_created_by_a_search(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, ["search", "x"], OFFLINE)
    assert code == 1 and "no epigraph store at './epigraph.db'" in err
    assert list(tmp_path.iterdir()) == []


def test_reading_an_empty_store_loads_no_embedding_model(tmp_path: Path) -> None:
    """search on a graph without episodes, and entity by a name it does not have: no model is loaded
    (the default sentence-transformers embedder; it took 15-20 s to report nothing)."""
    db = repr(str(tmp_path / "empty.db"))
    code = (
        "import sys, asyncio\n"
        "from epigraph.graph.embedded import EmbeddedStore\n"
        "from epigraph.cli import main\n"
        "async def make():\n"
        f"    async with EmbeddedStore({db}) as s: await s.setup(384)\n"
        "asyncio.run(make())\n"
        f"codes = [main(['search', 'x', '--db', {db}]), main(['entity', 'Bob', '--db', {db}])]\n"
        "loaded = [m for m in ('torch', 'sentence_transformers') if m in sys.modules]\n"
        "print(codes, loaded)\n"
    )
    env = {k: v for k, v in _subprocess_env().items() if k != "EPIGRAPH_EMBEDDER"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[0, 1] []"
    assert "nothing found for 'x'" in done.stdout and "no entity 'Bob'" in done.stderr


# ------------------------------------------------------------------------------ failures under --json


def test_failures_under_json_are_one_object_on_stdout(
    llm_server: ServerThread, graph_db: Path, tmp_path: Path, capsys: Capsys
) -> None:
    missing = str(tmp_path / "notes.db")
    code, out, err = run(capsys, ["search", "x", "--db", missing, "--json"], OFFLINE)
    error = json.loads(out)["error"]
    assert code == error["exit_code"] == 1
    assert (error["kind"], error["where"]) == ("StoreNotFound", None)
    assert error["message"] in err and missing in error["message"]

    code, out, err = run(capsys, ["--json", "search", "x", "--as-of", "yesterday"], OFFLINE)
    error = json.loads(out)["error"]
    assert code == error["exit_code"] == 2 and error["kind"] == "UsageError"
    assert "not an ISO date or datetime: 'yesterday'" in error["message"]

    code, out, _ = run(capsys, ["--json", "search"], OFFLINE)  # refused by the parser itself
    assert code == 2 and json.loads(out)["error"]["message"] == "the following arguments are required: QUERY"

    code, out, _ = run(capsys, ["--db", str(graph_db), "entity", "Alise", "--json"], OFFLINE)
    error = json.loads(out)["error"]
    assert (code, error["kind"], error["closest"][0]) == (1, "EntityNotFound", "Alice")

    code, out, _ = run(capsys, ["--json", "--db", str(tmp_path / "g.db"), "ingest", str(EPISODES)], OFFLINE)
    error = json.loads(out)["error"]
    assert (code, error["kind"]) == (2, "ConfigError") and "EPIGRAPH_LLM_MODEL" in error["message"]


def test_help_states_the_exit_codes_and_the_json_failures(capsys: Capsys) -> None:
    code, out, _ = run(capsys, ["--help"], OFFLINE)
    assert code == 0
    assert "exit codes: 0 ok, 1 failure, 2 usage error (nothing ingested), 130 interrupted" in out
    assert '{"error": {"kind", "message", "where", "exit_code"}}' in out


def test_version_prints_the_package_version(capsys: Capsys) -> None:
    code, out, _ = run(capsys, ["--version"], OFFLINE)
    assert (code, out) == (0, f"epigraph {__version__}\n")
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", __version__)


# -------------------------------------------------------------------------------------- subprocess


def _subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    return {**env, **OFFLINE, **extra}


def test_python_dash_m_epigraph_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "epigraph", "--help"],
        env=_subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for command in ("ingest", "import", "search", "entity", "episodes", "stats", "remove", "retry"):
        assert command in done.stdout
    assert "EPIGRAPH_LLM_BASE_URL" in done.stdout


def test_a_real_ingest_through_a_subprocess(llm_server: ServerThread, tmp_path: Path) -> None:
    db = tmp_path / "sub.db"
    env = _subprocess_env(**llm_env(llm_server), EPIGRAPH_DB=str(db))
    exe = shutil.which("epigraph", path=str(Path(sys.executable).parent))
    argv = [exe] if exe else [sys.executable, "-m", "epigraph"]
    done = subprocess.run(
        [*argv, "ingest", str(EPISODES), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["entities"], summary["facts"], summary["invalidations"]) == (6, 5, 1)
    assert API_KEY not in done.stdout + done.stderr
    assert db.exists(), "EPIGRAPH_DB from the environment picked the store"
