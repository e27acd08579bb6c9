"""bench/quality/live.py end to end against the local OpenAI-compatible test server (no real model): it
ingests the first turns of LoCoMo 26 in both modes, survives a runaway reply, and writes live.json
with the keys of DESIGN.md section 9."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench.shared.paths import DATA, DATASETS
from epigraph.testing.reading import asked_in, episode_in, prompt_of
from epigraph.testing.server import FakeOpenAIServer, Reply

KEYS = (
    "entity_recall", "entity_precision", "fact_recall", "aliases_merged", "contradictions_applied",
    "invalidations_spurious", "dropped_lines", "truncated_replies", "stopped_replies", "reasks",
    "failed_episodes",
    "calls_mean", "input_tokens_mean", "output_tokens_mean", "seconds_per_episode",
    "fact_precision", "facts_readable", "owner_right", "summaries_checked", "summary_fact_recall",
    "summary_sentences_unsupported",
)  # fmt: skip


def _answer(body: dict[str, Any]) -> Reply:
    prompt = prompt_of(body)
    if prompt == "extract_combined":
        return Reply(text="none\n")
    if prompt == "extract_entities":
        speaker, text = episode_in(body).split(": ", 1)
        if "support group" in text:  # a runaway: the same line until the runtime stops reading
            return Reply(chunks=[f"{speaker}; support group\n"] * 300, chunk_delay_s=0.002)
        return Reply(text=f"{speaker}\n")
    if prompt == "extract_facts":
        return Reply(text="none\n")
    if prompt == "extract_window":  # every numbered turn states nothing
        turns = re.findall(r"^(\d+)\. (\w+):", str(body["messages"][-1]["content"]), re.MULTILINE)
        return Reply(text="".join(f"{n} {speaker}: none\n" for n, speaker in turns))
    if prompt == "resolve_episode":
        entities, facts = asked_in(body)
        return Reply(text="\n".join(f"{i.id} new" for i in [*entities, *facts]))
    return Reply(text='{"decisions": [], "dates": [], "summaries": []}')


@pytest.mark.skipif(not DATASETS.is_dir(), reason="LoCoMo datasets not present")
async def test_the_live_bench_runs_both_modes_and_writes_its_keys(tmp_path: Path) -> None:
    from bench.quality import live

    async with FakeOpenAIServer(_answer) as srv:
        await live.main(
            ["--base-url", srv.base_url, "--turns", "6", "--embedder", "hash", "--results-dir", str(tmp_path),
             "--gold", str(DATASETS / "annotations" / "locomo26_s1-3.json"),
             "--gold", str(DATA / "locomo30_s1-3.json"), "--conversation", str(DATASETS)]
        )  # fmt: skip
    data = json.loads((tmp_path / "live.json").read_text())
    metrics = data["metrics"]
    for prefix in ("", "locomo30."):  # the second set's keys carry its name, default copies included
        for mode in ("separate", "combined", "default"):
            for key in KEYS:
                assert f"{prefix}{mode}.{key}" in metrics, f"{prefix}{mode}.{key}"
            assert (
                metrics[f"{prefix}{mode}.failed_episodes"] == 0 and metrics[f"{prefix}{mode}.episodes"] == 6
            )
        for key in KEYS:
            assert metrics[f"{prefix}default.{key}"] == metrics[f"{prefix}separate.{key}"], (
                "the local default"
            )
    assert metrics["separate.stopped_replies"] == 1, "the runaway reply was closed at its repeat, and counted"
    assert metrics["separate.truncated_replies"] == 0, "none reached its cap"
    assert metrics["separate.dropped_lines"] >= 1, "the repeat it was closed at"
    assert metrics["separate.entity_recall"] > 0, "the speakers are gold entities"
    kept = metrics["separate.prompts.extract_entities.kept_output_tokens"]
    assert 0 < kept <= metrics["separate.prompts.extract_entities.output_tokens"], "a name list's kept names"
    assert any("SLICE" in n or "first 6 turns" in n for n in data["notes"])


@pytest.mark.skipif(not DATASETS.is_dir(), reason="LoCoMo datasets not present")
@pytest.mark.parametrize("mode", ["combined", "bulk"])
async def test_a_replay_of_the_saved_replies_builds_the_same_graph_without_a_model(
    tmp_path: Path, mode: str
) -> None:
    from bench.quality import live

    common = ["--turns", "4", "--modes", mode, "--embedder", "hash", "--results-dir", str(tmp_path)]
    async with FakeOpenAIServer(_answer) as srv:
        await live.main(["--base-url", srv.base_url, *common, "--save-replies", str(tmp_path / "r.jsonl")])
    assert (tmp_path / f"r.locomo26.{mode}.jsonl").is_file()
    await live.main(["--replay", str(tmp_path / "r.jsonl"), *common])  # the server is gone
    # (tokens are counted again locally: the graph and the calls are what a replay reproduces)
    live = json.loads((tmp_path / "live.json").read_text())["metrics"]
    replay = json.loads((tmp_path / "live_replay.json").read_text())["metrics"]
    same = ("entities_built", "facts_built", "entity_recall", "fact_recall", "calls_mean", "reasks")
    assert {k: replay[f"{mode}.{k}"] for k in same} == {k: live[f"{mode}.{k}"] for k in same}
    # every turn, also those a bulk window's one call covered without a call of their own
    assert replay[f"{mode}.episodes"] == 4 and replay[f"{mode}.failed_episodes"] == 0


def test_a_replay_that_no_longer_matches_the_pipeline_says_so(tmp_path: Path) -> None:
    from bench.quality.live_replay import replayed
    from epigraph.prompts.protocol import ChatRequest
    from epigraph.testing.doubles import ScriptError

    path = tmp_path / "r.locomo26.combined.jsonl"
    row = {"prompt": "extract_combined", "finish": "stop", "episode": "Hey Mel!", "text": "none"}
    path.write_text(json.dumps(row) + "\n")
    llm = replayed(path)
    with pytest.raises(ScriptError, match="for the episode 'Something else'"):
        llm._script(ChatRequest([], prompt_name="extract_combined", variables={"message": "Something else"}))  # type: ignore[operator]
    with pytest.raises(ScriptError, match="no recorded resolve_episode reply"):
        llm._script(ChatRequest([], prompt_name="resolve_episode", variables={"episode": "Hey Mel!"}))  # type: ignore[operator]


@pytest.mark.skipif(not DATASETS.is_dir(), reason="LoCoMo datasets not present")
async def test_the_full_profile_runs_beside_the_small_one(tmp_path: Path) -> None:
    """--profile full: IngestOptions() (resolve and retire on) on the same endpoint, its keys written as
    full.* into the same results beside the small profile's, its replies saved apart."""
    from bench.quality import live

    common = [
        "--turns", "3", "--embedder", "hash", "--results-dir", str(tmp_path), "--modes", "separate",
        "--gold", str(DATASETS / "annotations" / "locomo26_s1-3.json"), "--conversation", str(DATASETS),
    ]  # fmt: skip
    async with FakeOpenAIServer(_answer) as srv:
        for profile in ("small", "full"):
            await live.main(
                ["--base-url", srv.base_url, "--profile", profile, *common,
                 "--save-replies", str(tmp_path / "replies.jsonl")]
            )  # fmt: skip
    data = json.loads((tmp_path / "live.json").read_text())
    metrics = data["metrics"]
    assert metrics["default.episodes"] == 3 and metrics["full.default.episodes"] == 3, "both, one file"
    assert "full.separate.entity_precision" in metrics and "separate.entity_precision" in metrics
    assert any(
        "the full profile (IngestOptions(): resolve and retire on, keys full.*)" in n for n in data["notes"]
    )
    assert any("retire_all_guard: 0" in n for n in data["notes"]), "a larger model's: no guard"
    assert (tmp_path / "replies.full.locomo26.separate.jsonl").is_file()
    assert (tmp_path / "replies.locomo26.separate.jsonl").is_file()


def test_an_option_of_a_group_is_set_by_its_dotted_name() -> None:
    """``--option GROUP.NAME=VALUE`` sets one field of one group of IngestOptions, the others kept; the
    guard has its own flag, and a name that is no field (or a flat name of old) is refused."""
    from bench.quality import live
    from epigraph.pipeline.options import small_model_options

    small = small_model_options()
    chosen = ["facts.resolve=true", "context.tokens=50", "names.things=off", "window=3"]
    options = live.with_options(small, chosen)
    chosen_fields = (options.facts.resolve, options.context.tokens, options.names.things, options.window)
    assert chosen_fields == (True, 50, None, 3)
    assert options.facts.retire is False and options.names.bare_names, "the rest as the profile has it"
    for refused in ("facts.retire_all_guard=1", "resolve=true", "mode=bulk", "facts.nothing=1"):
        with pytest.raises(SystemExit, match="not an IngestOptions field"):
            live.with_options(small, [refused])


def test_the_fact_line_format_is_set_by_its_name() -> None:
    """``--option facts.line_format=numbered`` (a text value) picks the numbered fact lines; a format
    that is none is refused by name before anything runs."""
    from bench.quality import live
    from epigraph.pipeline.options import small_model_options

    small = small_model_options()
    assert small.facts.line_format == "brackets"
    options = live.with_options(small, ["facts.line_format=numbered"])
    assert options.facts.line_format == "numbered" and options.facts.dates_stated_only
    with pytest.raises(SystemExit, match="must be one of brackets, numbered, not 'numbers'"):
        live.with_options(small, ["facts.line_format=numbers"])
