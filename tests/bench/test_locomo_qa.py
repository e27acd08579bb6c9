"""bench/quality/locomo_qa.py end to end, offline: a tiny LoCoMo-shaped conversation and a gold extraction set
made here, the scripted model (``--scripted``), every row asked, scored and judged, the results file
written with the issue's keys; and its measures (``qa_metrics``): LoCoMo's F1, the bootstrap, the
judge's votes."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from bench.quality import locomo_qa, qa_judge, qa_locomo, qa_model_speed, qa_rows
from bench.quality import qa_metrics as qa
from bench.shared.gold import GoldScript
from epigraph.errors import StructuredOutputError
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.render import render
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.prompts.runtime import run
from epigraph.testing import ScriptedLLM, ScriptedReply
from epigraph.testing.server import Reply

S1 = [
    {"speaker": "Mia", "dia_id": "D1:1", "text": "Noah, I finished the Boston marathon yesterday."},
    {"speaker": "Noah", "dia_id": "D1:2", "text": "Amazing! I adopted a cat called Pixel."},
    {"speaker": "Mia", "dia_id": "D1:3", "text": "Send me a photo of Pixel!"},
]
CONVERSATION = {
    "speaker_a": "Mia",
    "speaker_b": "Noah",
    "session_1_date_time": "9:15 am on 3 March, 2023",
    "session_1": S1,
    "session_2_date_time": "6:40 pm on 12 April, 2023",
    "session_2": [
        {"speaker": "Noah", "dia_id": "D2:1", "text": "Pixel knocked my Monstera plant over."},
        {"speaker": "Mia", "dia_id": "D2:2", "text": "I signed up for the Lisbon marathon in October."},
    ],
    "session_3_date_time": "8:00 am on 1 May, 2023",
    "session_3": [{"speaker": "Mia", "dia_id": "D3:1", "text": "Training for Lisbon every morning now."}],
    "qa": [
        {"question": "What is Noah's cat called?", "answer": "Pixel", "evidence": ["D1:2"], "category": 1},
        {"question": "Which marathon did Mia finish?", "answer": "Boston marathon", "evidence": ["D1:1"],
         "category": 2},
        {"question": "Would Mia run Lisbon?", "answer": "Yes, the Lisbon marathon", "evidence": ["D2:2"],
         "category": 3},
        {"question": "What did Pixel knock over?", "answer": "a Monstera plant", "evidence": ["D2:1"],
         "category": 4},
        {"question": "What does Mia do every morning?", "answer": "training", "evidence": ["D3:1"],
         "category": 4},
        {"question": "Adversarial", "evidence": ["D1:1"], "category": 5, "adversarial_answer": "x"},
    ],
}  # fmt: skip
ROW_KEYS = (
    "j", "j_ci_low", "j_ci_high", "f1", "f1_ci_low", "f1_ci_high", "questions", "answer_tokens_mean",
    "context_tokens_mean", "input_tokens_mean", "calls_mean", "latency_p50_ms", "latency_p95_ms",
    "judge_unanimous",
)  # fmt: skip


def _fact(fid: str, source: str, target: str, relation: str, sentence: str) -> dict[str, Any]:
    return {"id": fid, "source": source, "target": target, "relation": relation, "fact": sentence,
            "valid_at": "2023-03-03T09:15:00Z", "invalid_at": None}  # fmt: skip


def gold_set(conversation: str) -> dict[str, Any]:
    """A gold extraction of session 1 (the format of bench/data/README.md)."""
    mia, noah = {"name": "Mia", "type": "Person"}, {"name": "Noah", "type": "Person"}
    finished = "Mia finished the Boston marathon."
    annotated = {
        "D1:1": ([mia, noah, {"name": "Boston marathon", "type": "Event"}],
                 [_fact("D1:1#1", "Mia", "Boston marathon", "FINISHED", finished)]),
        "D1:2": ([noah, {"name": "Pixel", "type": "Animal"}],
                 [_fact("D1:2#1", "Noah", "Pixel", "ADOPTED", "Noah adopted a cat called Pixel.")]),
        "D1:3": ([mia], []),
    }  # fmt: skip
    turns = {
        t["dia_id"]: {
            "speaker": t["speaker"], "text_sha1": hashlib.sha1(t["text"].encode()).hexdigest()[:12],
            "kind": "substantive", "entities": annotated[t["dia_id"]][0], "facts": annotated[t["dia_id"]][1],
        }
        for t in S1
    }  # fmt: skip
    return {"conversation": conversation, "sessions": [1], "speakers": ["Mia", "Noah"],
            "session_times_utc": {"1": "2023-03-03T09:15:00Z"}, "turns": turns}  # fmt: skip


def files(tmp_path: Path) -> tuple[Path, Path]:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    gold = tmp_path / "tiny_gold.json"
    gold.write_text(json.dumps(gold_set("tiny")), encoding="utf-8")
    return path, gold


def test_the_harness_runs_offline_and_writes_every_key(tmp_path: Path) -> None:
    path, gold = files(tmp_path)
    details = tmp_path / "answers.jsonl"
    argv = ["--conversation", str(path), "--sessions", "2", "--scripted", "--results-dir", str(tmp_path)]
    written = locomo_qa.main([*argv, "--gold", str(gold), "--details", str(details)])
    result = json.loads(written.read_text(encoding="utf-8"))
    metrics = result["metrics"]
    assert written == tmp_path / "qa.json" and result["bench"] == "qa"
    assert metrics["questions"] == 4, "category 5 and the question about session 3 are left out"
    assert [metrics[f"questions.category{c}"] for c in (1, 2, 3, 4)] == [1, 1, 1, 1]
    assert metrics["episodes"] == 5 and metrics["ingested_episodes"] == 5
    for row in ("graph", "full_context", "episodes", "gold_graph"):
        for key in ROW_KEYS:
            assert f"{row}.{key}" in metrics, f"{row}.{key}"
        assert metrics[f"{row}.j_ci_low"] <= metrics[f"{row}.j"] <= metrics[f"{row}.j_ci_high"]
        assert metrics[f"{row}.f1_ci_low"] <= metrics[f"{row}.f1"] <= metrics[f"{row}.f1_ci_high"]
    assert metrics["gold_graph.questions"] == 2, "only the questions whose evidence the gold set covers"
    for pair in ("graph_minus_full_context", "graph_minus_episodes", "gold_graph_minus_graph"):
        assert {f"{pair}.j", f"{pair}.j_ci_low", f"{pair}.j_ci_high", f"{pair}.f1"} <= set(metrics)
    for pair in ("graph_minus_full_context", "graph_minus_episodes"):
        assert metrics[f"{pair}.questions"] == 4
        for c in (1, 2, 3, 4):  # one question each: the difference is its interval
            diff = (
                metrics[f"graph.j.category{c}"]
                - metrics[f"{pair.removeprefix('graph_minus_')}.j.category{c}"]
            )
            assert metrics[f"{pair}.j.category{c}"] == metrics[f"{pair}.j.category{c}_ci_low"] == diff
    assert metrics["gold_graph_minus_graph.questions"] == 2
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 * 3 + 2
    assert {r["row"] for r in rows} == {"graph", "full_context", "episodes", "gold_graph"}
    full = [r for r in rows if r["row"] == "full_context"]
    assert all(r["context_tokens"] == full[0]["context_tokens"] > 0 for r in full), "the whole conversation"
    pixel = next(r for r in rows if r["row"] == "graph" and "Pixel" in r["answer"])
    assert pixel["correct"] and pixel["f1"] > 0 and pixel["calls"] == 1 and pixel["context_tokens"] > 0
    distinct = {(r["question"], qa.normalize_answer(qa.strip_citations(r["answer"]))) for r in rows}
    assert metrics["judge.distinct_answers"] == len(distinct) < len(rows), "each distinct answer judged once"
    # the scripted judge always agrees with itself: two votes of three settle each answer
    assert metrics["judge.calls"] == 2 * len(distinct) and metrics["judge.votes"] == 3
    assert metrics["graph.errors"] == 0 and metrics["graph.calls_mean"] == 1
    for row in ("graph", "full_context", "episodes", "gold_graph"):  # probed before each row's answers
        assert (
            metrics[f"{row}.host_prompt_tokens_per_s"] > 0
            and metrics[f"{row}.host_generated_tokens_per_s"] > 0
        )
    notes = " ".join(result["notes"])
    assert "scripted" in notes and "the last 5 of 5 turns" in notes and "tiny_gold" not in notes
    assert "gold_graph: " in notes and "(3 turns, 2 questions)" in notes
    assert "llama.cpp runtime of the model server: scripted" in notes


def test_a_runs_answers_are_judged_again_with_more_votes(tmp_path: Path) -> None:
    """--rejudge: the answers of a run's --details judged again (no answering), into qa_votes.json."""
    path, _ = files(tmp_path)
    details = tmp_path / "answers.jsonl"
    argv = ["--conversation", str(path), "--sessions", "2", "--scripted", "--results-dir", str(tmp_path)]
    first = locomo_qa.main([*argv, "--no-gold", "--votes", "1", "--details", str(details)])
    run = json.loads(first.read_text(encoding="utf-8"))
    written = locomo_qa.main([*argv, "--votes", "5", "--rejudge", str(details)])
    result = json.loads(written.read_text(encoding="utf-8"))
    metrics = result["metrics"]
    assert written == tmp_path / "qa_votes.json" and result["bench"] == "qa_votes"
    distinct = run["metrics"]["judge.distinct_answers"]
    assert metrics["judge.votes"] == 5 and metrics["judge.calls"] == 3 * distinct, "3 agreeing of 5 settle it"
    for row in ("graph", "full_context", "episodes"):  # a deterministic judge: the same verdicts
        assert metrics[f"{row}.j"] == run["metrics"][f"{row}.j"] and metrics[f"{row}.judge_unanimous"] == 1.0
    assert metrics["judge.same_as_recorded"] == 1.0 and "graph.latency_p50_ms" not in metrics
    assert "answers.jsonl" in " ".join(result["notes"]) and "by scripted" in " ".join(result["notes"])
    with pytest.raises(SystemExit, match="questions not in the conversations"):
        locomo_qa.main(
            ["--conversation", str(path), "--sessions", "1", "--scripted", "--rejudge", str(details)]
        )


def test_a_stored_graph_is_reused(tmp_path: Path) -> None:
    path, _ = files(tmp_path)
    argv = ["--conversation", str(path), "--sessions", "1", "--scripted", "--results-dir", str(tmp_path)]
    argv += ["--db", str(tmp_path / "qa.db"), "--questions", "1", "--no-gold"]
    first = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
    again = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
    assert (first["ingested_episodes"], again["ingested_episodes"]) == (3, 0)
    assert first["graph.j"] == again["graph.j"] and "gold_graph.j" not in first
    more = json.loads(locomo_qa.main([*argv[:3], "2", *argv[4:]]).read_text(encoding="utf-8"))["metrics"]
    assert more["ingested_episodes"] == 2, "a later session: only its turns are ingested"


def test_other_paths_are_rows_of_their_own(tmp_path: Path) -> None:
    path, _ = files(tmp_path)
    argv = ["--conversation", str(path), "--sessions", "2", "--scripted", "--results-dir", str(tmp_path),
            "--no-gold", "--ask-mode", "context", "--also-ask-mode", "agent"]  # fmt: skip
    metrics = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
    assert metrics["graph.calls_mean"] == 1 and metrics["graph_agent.calls_mean"] == 3
    assert "graph_minus_graph_agent.j_ci_low" in metrics


def test_the_full_conversation_is_cut_to_the_newest_turns_that_fit(tmp_path: Path) -> None:
    path, _ = files(tmp_path)
    conversation = qa_locomo.load(path, None)
    everything = locomo_qa.conversation_lines(conversation, 10_000)
    assert len(everything) == 6 and everything[0].startswith("E1 [3 March 2023]: Mia: Noah, I finished")
    cut = locomo_qa.conversation_lines(conversation, 40)
    assert 0 < len(cut) < 6 and cut[-1].endswith("Training for Lisbon every morning now.")
    assert cut[0].startswith("E1 "), "renumbered from E1"


def test_f1_is_locomos() -> None:
    assert qa.normalize_answer("The Boston Marathon, a race!") == "boston marathon race"
    assert qa.token_f1("Boston marathon", "the Boston Marathon") == 1.0
    assert qa.token_f1("She was running", "runs") == pytest.approx(0.5), "Porter stems: running = runs"
    assert qa.token_f1("", "Pixel") == 0.0 and qa.token_f1("Pixel", "") == 0.0
    assert qa.locomo_f1("Her cat is called Pixel [F1].", "Pixel", 2) == pytest.approx(1 / 3), "P 1/5, R 1"
    assert qa.locomo_f1("pottery, camping", "pottery, camping, painting", 1) == pytest.approx(2 / 3)
    assert qa.locomo_f1("jogging", "running; jogging", 3) == 0.0, "category 3: the first alternative only"
    assert qa.locomo_f1("running", "running; jogging", 3) == 1.0
    assert qa.strip_citations("Berlin [F1, E2]. Nothing else. [none]") == "Berlin. Nothing else."


def test_the_bootstrap_interval() -> None:
    values = [1.0, 0.0] * 20
    low, high = qa.bootstrap_ci(values)
    assert low < 0.5 < high and (low, high) == qa.bootstrap_ci(values), "fixed seed: the same interval"
    wide, narrow = qa.bootstrap_ci(values[:10]), qa.bootstrap_ci(values * 10)
    assert wide[1] - wide[0] > narrow[1] - narrow[0], "more questions, a narrower interval"
    assert qa.bootstrap_ci([1.0] * 7) == (1.0, 1.0)
    assert qa.paired_bootstrap_ci(values, values) == (0.0, 0.0)
    better = qa.paired_bootstrap_ci([1.0] * 40, values)
    assert better[0] > 0, "a row right on every question the other misses is better beyond doubt"
    with pytest.raises(ValueError):
        qa.paired_bootstrap_ci([1.0], [1.0, 0.0])


def test_votes_and_their_agreement() -> None:
    assert qa.majority([True, True, False]) == (True, pytest.approx(2 / 3))
    assert qa.majority([False, True]) == (False, 0.5), "a tie is not a majority"
    assert qa.majority([True] * 5) == (True, 1.0)
    assert qa.settled([True, True], 3) and qa.settled([False, False], 3)
    assert qa.settled([True, False, True], 3)
    assert not qa.settled([True, False], 3) and not qa.settled([], 1) and not qa.settled([True, True], 4)
    assert qa.settled([True, True, True], 4) and qa.settled([False, False], 4)
    labels = iter(["CORRECT", "WRONG", "CORRECT"] * 10)
    temperatures: list[float | None] = []

    def judge(request: ChatRequest) -> str:
        temperatures.append(request.temperature)
        return json.dumps({"reasoning": "", "label": next(labels)})

    grader = qa_rows.Judge(ScriptedLLM({"qa_judge": judge}), votes=3, temperature=0.7)
    q = qa_rows.Question("c:1", "What is the cat called?", "Pixel", 4, ("D1:2",), "c")

    async def grade() -> list[tuple[bool, ...]]:
        return [await grader.grade(q, a) for a in ("The Pixel [F1].", "pixel [E3]", "Tom [F2].")]

    first, same, other = asyncio.run(grade())
    assert first == same == (True, False, True), "the same words (citations aside) are judged once"
    assert len(other) == 3 and grader.calls == 6 and len(grader.verdicts) == 2
    assert temperatures == [0.7] * 6, "several votes sample at the judge's temperature"


def test_the_judge_prompt_is_the_benchs_own_run_by_the_packages_runtime() -> None:
    """Its template is beside it in bench/quality (the package ships neither), rendered, called and parsed
    by the package's prompt runtime: the question, the gold answer and the answer go in, a label comes
    out, and a reply that is neither CORRECT nor WRONG is asked again, then refused."""
    import epigraph.prompts

    folder = qa_judge.PROMPT.template_dir
    assert folder is not None and (folder / "qa_judge.txt").is_file()
    assert not (Path(epigraph.prompts.__file__).parent / "templates" / "qa_judge.txt").exists()
    said = render(qa_judge.PROMPT, qa_judge.EXAMPLE)[-1]["content"]
    assert all(v in said for v in ("When did Caroline go", "7 May 2023", "May 7th, 2023 [E3]"))

    def reply(label: str) -> ScriptedLLM:
        return ScriptedLLM({"qa_judge": lambda r: json.dumps({"reasoning": "one sentence", "label": label})})

    result = asyncio.run(run(reply("CORRECT"), qa_judge.PROMPT, qa_judge.EXAMPLE))
    assert result.value.label == "CORRECT" and result.calls == 1
    with pytest.raises(StructuredOutputError):
        asyncio.run(run(reply("MAYBE"), qa_judge.PROMPT, qa_judge.EXAMPLE))


class _InFlight:
    """The judge's model, counting the calls it runs at once (each takes a moment)."""

    def __init__(self, inner: ScriptedLLM) -> None:
        self.inner, self.now, self.most = inner, 0, 0

    async def complete(self, request: ChatRequest) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.01)
            return await self.inner.complete(request)
        finally:
            self.now -= 1

    def stream(self, request: ChatRequest) -> Any:
        return self.inner.stream(request)


@pytest.mark.parametrize("parallel", [1, 2])
def test_distinct_answers_are_judged_side_by_side_each_once(parallel: int) -> None:
    def judge(request: ChatRequest) -> str:
        correct = "pixel" in str(request.variables["generated_answer"]).lower()
        return json.dumps({"reasoning": "", "label": "CORRECT" if correct else "WRONG"})

    llm = _InFlight(ScriptedLLM({"qa_judge": judge}))
    grader = qa_rows.Judge(llm, votes=3, temperature=0.7, parallel=parallel)
    q = qa_rows.Question("c:1", "What is the cat called?", "Pixel", 4, ("D1:2",), "c")
    rows = [
        qa_rows.Row(name, "c:1", 4, answer, 3, 10, 20, 1, 5.0)
        for name, answer in (
            ("graph", "The Pixel [F1]."),
            ("episodes", "pixel [E3]"),
            ("mem0", "Tom"),
            ("x", "Rex"),
        )
    ]
    asyncio.run(grader.grade_all(rows, {"c:1": q}))
    assert [r.correct for r in rows] == [True, True, False, False]
    assert rows[0].votes == rows[1].votes == (True, True), "two agreeing votes of three settle it"
    assert grader.calls == 6 and len(grader.verdicts) == 3, "the same words: judged once, even side by side"
    assert llm.most == parallel, "as many distinct answers at once as asked, and no more"
    with pytest.raises(ValueError, match="one answer at a time"):
        qa_rows.Judge(llm, votes=3, temperature=0.7, parallel=0)


def test_the_gold_script_resolves_a_fact_by_the_sentence_the_graph_stores() -> None:
    """A gold sentence that does not name both ends ("Noah adopted a cat.") is stored as its line reads
    ("Noah adopted Pixel"); resolve_episode is asked about that text, and must find its gold fact (the
    QA bench's gold graph stopped on a KeyError for such a fact)."""
    gold = gold_set("tiny")
    fact = gold["turns"]["D1:2"]["facts"][0]
    fact["fact"] = "Noah adopted a cat."
    again = {**_fact("D1:3#1", "Noah", "Pixel", "ADOPTED", "Noah adopted a cat."), "duplicate_of": ["D1:2#1"]}
    gold["turns"]["D1:3"]["facts"] = [again]
    script = GoldScript(gold, [], latency=0.0, chunk_ms=0.0)
    candidate = {"id": "1.1", "fact": "Noah adopted Pixel"}
    asked = {"entities": [], "facts": [{"id": "1", "fact": "Noah adopted Pixel", "candidates": [candidate]}]}
    assert script.resolve_episode(asked) == verdict_line("1", ["1.1"])


def test_ingestion_alone_is_resumable_and_summed_from_the_stored_reports(tmp_path: Path) -> None:
    """--ingest-only keeps the graph in --db; a later run over more sessions ingests only the new turns,
    and graph.ingest.* counts every episode done, by whichever run."""
    path, _ = files(tmp_path)
    db = ["--db", str(tmp_path / "qa.db"), "--scripted", "--results-dir", str(tmp_path)]
    first = locomo_qa.main(["--conversation", str(path), "--sessions", "1", "--ingest-only", *db])
    metrics = json.loads(first.read_text(encoding="utf-8"))["metrics"]
    assert first.name == "qa_ingest.json" and not (tmp_path / "qa.json").exists()
    assert metrics["ingested_episodes"] == 3 and metrics["graph.ingest.episodes_done"] == 3
    assert metrics["graph.ingest.seconds_total"] > 0 and metrics["graph.ingest.calls_per_turn"] >= 1
    run = locomo_qa.main(["--conversation", str(path), "--no-gold", *db])
    result = json.loads(run.read_text(encoding="utf-8"))
    metrics = result["metrics"]
    assert metrics["ingested_episodes"] == 3, "sessions 2 and 3 only: session 1 was done"
    assert metrics["graph.ingest.episodes_done"] == metrics["graph.ingest.turns"] == 6
    assert metrics["full_context.turns_included"] == metrics["full_context.turns_total"] == 6
    assert metrics["full_context.truncated"] == 0
    assert "as a user would paste it" in " ".join(result["notes"])
    cut = locomo_qa.main(["--conversation", str(path), "--no-gold", "--context-window", "1060", *db])
    metrics = json.loads(cut.read_text(encoding="utf-8"))["metrics"]
    assert metrics["ingested_episodes"] == 0 and metrics["full_context.truncated"] == 1
    assert 0 < metrics["full_context.turns_included"] < 6
    with pytest.raises(SystemExit):
        locomo_qa.main(["--conversation", str(path), "--ingest-only", "--scripted"])


FAILS: list[str] = []
"""Texts whose next extraction call the test server refuses (once each)."""


def mem0_extraction(body: dict[str, Any]) -> str | Reply:
    """Mem0's extraction call answered offline: each new message becomes one memory, as it was said."""
    prompt = body["messages"][-1]["content"]
    if failing := [text for text in FAILS if text in prompt]:
        FAILS.remove(failing[0])
        return Reply.bad_request("the context is full")
    new = prompt.split("## New Messages", 1)[1].split("##", 1)[0]
    said = [line.split(": ", 1)[1] for line in new.splitlines() if ": " in line]
    return json.dumps({"memory": [{"id": str(i), "text": text} for i, text in enumerate(said)]})


@pytest.mark.slow
def test_a_mem0_row_adds_searches_and_is_paired_with_the_graph(tmp_path: Path) -> None:
    """The mem0 row offline: Mem0's own add over session 1 (its model the local test server, its
    embedder the real MiniLM, as in the bench), its search as the context, the same answer prompt and
    judge; its store reused by a second run (nothing added again)."""
    if importlib.util.find_spec("mem0") is None:  # not imported here: _mem0_row turns telemetry off first
        pytest.skip("the mem0 row needs the bench extra (mem0ai)")
    from bench.shared.serve_harness import LLMThread

    path, _ = files(tmp_path)
    with LLMThread(mem0_extraction, embed_dim=384, api_key=None) as server:
        argv = ["--conversation", str(path), "--scripted", "--no-gold", "--results-dir", str(tmp_path),
                "--mem0-dir", str(tmp_path / "mem0"), "--mem0-sessions", "1", "--mem0-base-url", server.url,
                "--mem0-model", "fake-model", "--mem0-max-tokens", "300"]  # fmt: skip
        first = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))
        extraction = [r for r in server.server.chat_requests if "New Messages" in str(r.body)]
        again = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
    metrics = first["metrics"]
    assert len(extraction) == 3 and all(r.body["max_tokens"] == 300 for r in extraction), "one add per turn"
    assert metrics["mem0.add.turns"] == metrics["mem0.add.turns_added"] == metrics["mem0.add.this_run"] == 3
    assert metrics["mem0.add.calls_per_turn"] == 1 and metrics["mem0.add.input_tokens_per_turn"] > 0
    assert metrics["mem0.add.memories"] == 3 and metrics["mem0.questions"] == 2, "session 1's questions"
    for key in ("j", "f1", "context_tokens_mean", "latency_p50_ms", "j.category1", "j.category2"):
        assert f"mem0.{key}" in metrics, key
    assert metrics["mem0.context_tokens_mean"] > 0, "its memories were the context"
    for key in ("j", "j_ci_low", "j_ci_high", "f1", "f1_ci_low", "f1_ci_high"):
        assert f"graph_minus_mem0.{key}" in metrics
    assert metrics["graph_minus_mem0.questions"] == 2, "paired on mem0's questions only"
    assert metrics["mem0.j"] == 1.0, "the memory that answers each question was found and shown"
    notes = " ".join(first["notes"])
    assert "mem0ai 2.2.1" in notes and "max_tokens 300" in notes and "EPIGRAPH_LOCAL_MODEL_CTX=16384" in notes
    assert again["mem0.add.this_run"] == 0 and again["mem0.add.turns_added"] == 3
    assert again["mem0.j"] == metrics["mem0.j"]


@pytest.mark.slow
def test_a_failed_mem0_add_is_logged_and_tried_again(tmp_path: Path) -> None:
    if importlib.util.find_spec("mem0") is None:
        pytest.skip("the mem0 row needs the bench extra (mem0ai)")
    from bench.shared.serve_harness import LLMThread

    path, _ = files(tmp_path)
    FAILS.append("Pixel knocked")
    with LLMThread(mem0_extraction, embed_dim=384, api_key=None) as server:
        argv = ["--conversation", str(path), "--scripted", "--no-gold", "--results-dir", str(tmp_path),
                "--mem0-dir", str(tmp_path / "mem0"), "--mem0-sessions", "2", "--mem0-base-url", server.url,
                "--mem0-model", "fake-model", "--no-baselines"]  # fmt: skip
        first = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
        again = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
    assert (first["mem0.add.this_run"], first["mem0.add.turns_added"], first["mem0.add.errors"]) == (5, 4, 1)
    assert (again["mem0.add.this_run"], again["mem0.add.turns_added"], again["mem0.add.errors"]) == (1, 5, 0)
    assert not FAILS


def test_a_killed_run_resumes_from_its_journal(tmp_path: Path) -> None:
    """--journal: each answer and verdict is written as it is made; a run started again with the same
    journal asks and judges only what is not there (a line cut by the kill is written again)."""
    path, gold = files(tmp_path)
    journal = tmp_path / "run.journal.jsonl"
    argv = ["--conversation", str(path), "--sessions", "2", "--scripted", "--results-dir", str(tmp_path),
            "--gold", str(gold), "--journal", str(journal)]  # fmt: skip
    whole = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))
    lines = journal.read_text(encoding="utf-8").splitlines()
    kinds = [json.loads(line)["kind"] for line in lines]
    assert kinds[0] == "settings" and kinds.count("answer") == 4 * 3 + 2
    assert kinds.count("verdict") == whole["metrics"]["judge.distinct_answers"]
    assert "0 answers and 0 verdicts" in " ".join(whole["notes"])
    answers = [i for i, kind in enumerate(kinds) if kind == "answer"]
    killed = answers[5]  # five answers made, the sixth cut half-written
    journal.write_text("\n".join(lines[:killed]) + "\n" + lines[killed][:20], encoding="utf-8")
    resumed = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))
    assert "5 answers and 0 verdicts were made by an earlier run" in " ".join(resumed["notes"])
    for key in (
        "graph.j",
        "graph.f1",
        "episodes.j",
        "full_context.f1",
        "gold_graph.j",
        "judge.distinct_answers",
    ):
        assert resumed["metrics"][key] == whole["metrics"][key], key
    assert resumed["metrics"]["judge.calls"] == whole["metrics"]["judge.calls"], "nothing was judged before"
    again = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))
    assert again["metrics"]["judge.calls"] == 0, "every verdict read back, none asked again"
    assert not any(".host_" in key for key in again["metrics"]), "no answer made: the model was not probed"
    assert again["metrics"]["graph.j"] == whole["metrics"]["graph.j"]
    assert f"{4 * 3 + 2} answers and {whole['metrics']['judge.distinct_answers']} verdicts" in " ".join(
        again["notes"]
    )
    kinds = [json.loads(line)["kind"] for line in journal.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("answer") == 4 * 3 + 2, "the cut line written once, nothing twice"


def test_a_journal_of_other_settings_is_refused(tmp_path: Path) -> None:
    path, _ = files(tmp_path)
    journal = tmp_path / "run.journal.jsonl"
    argv = ["--conversation", str(path), "--sessions", "1", "--scripted", "--results-dir", str(tmp_path),
            "--no-gold", "--questions", "1", "--journal", str(journal)]  # fmt: skip
    locomo_qa.main([*argv, "--votes", "1"])
    before = journal.read_text(encoding="utf-8")
    with pytest.raises(SystemExit, match=r"other settings \(votes: 1 there, 3 now\)"):
        locomo_qa.main([*argv, "--votes", "3"])
    assert journal.read_text(encoding="utf-8") == before, "the journal is left as it was"
    journal.write_text(before + "not json\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"run.journal.jsonl:\d+: not a journal line"):
        locomo_qa.main([*argv, "--votes", "1"])


def test_the_model_speed_probe_reads_a_new_prompt_then_writes_a_long_reply() -> None:
    llm = ScriptedLLM(
        {"model_speed": [ScriptedReply("ok", delay_s=0.2), ScriptedReply("1\n2\n3", delay_s=0.4)]}
    )
    speed = asyncio.run(qa_model_speed.model_speed(llm))
    read, write = llm.calls
    assert (read.request.max_tokens, write.request.max_tokens) == (1, qa_model_speed.WRITE_TOKENS)
    assert (
        read.request.messages[0]["content"].split(".")[0]
        != write.request.messages[0]["content"].split(".")[0]
    )
    prompt_tokens = read.completion.usage.input_tokens
    assert prompt_tokens > 500, "a prompt about as long as an answer's context"
    assert 0 < speed["prompt_tokens_per_s"] <= prompt_tokens / 0.2, "read in 0.2 s or more"
    assert 0 < speed["generated_tokens_per_s"] <= write.completion.usage.output_tokens / (0.4 - 0.1)


def test_the_bench_names_which_llama_cpp_answers_it(tmp_path: Path) -> None:
    """The notes and the journal say what answered: a scripted model, the user's endpoint, or the local
    server's runtime (the wheel or a build for this CPU), read from its state file."""
    from epigraph.config import Settings

    local = Settings(llm_local=True, local_model_dir=str(tmp_path))
    assert qa_model_speed.model_runtime(local, scripted=True) == "scripted"
    assert qa_model_speed.model_runtime(Settings(), scripted=False) == "endpoint"
    assert qa_model_speed.model_runtime(local, scripted=False) == "not running"
