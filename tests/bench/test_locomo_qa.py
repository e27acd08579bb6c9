"""bench/locomo_qa.py end to end, offline: a tiny LoCoMo-shaped conversation made here, the scripted
model (``--scripted``), all three modes asked and graded, the results file written with DESIGN.md's keys."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import locomo_qa

CONVERSATION = {
    "speaker_a": "Mia",
    "speaker_b": "Noah",
    "session_1_date_time": "9:15 am on 3 March, 2023",
    "session_1": [
        {"speaker": "Mia", "dia_id": "D1:1", "text": "Noah, I finished the Boston marathon yesterday."},
        {"speaker": "Noah", "dia_id": "D1:2", "text": "Amazing! I adopted a cat called Pixel."},
        {"speaker": "Mia", "dia_id": "D1:3", "text": "Send me a photo of Pixel!"},
    ],
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
}


def test_the_harness_runs_offline_and_writes_every_key(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    details = tmp_path / "answers.jsonl"
    argv = ["--conversation", str(path), "--sessions", "2", "--scripted", "--results-dir", str(tmp_path)]
    written = locomo_qa.main([*argv, "--details", str(details)])
    result = json.loads(written.read_text(encoding="utf-8"))
    metrics = result["metrics"]
    assert written == tmp_path / "qa.json" and result["bench"] == "qa"
    assert metrics["questions"] == 4, "category 5 and the question about session 3 are left out"
    assert metrics["episodes"] == 5 and metrics["ingested_episodes"] == 5
    for mode in ("graph", "full_context", "episodes"):
        for key in ("j", *(f"j.category{c}" for c in (1, 2, 3, 4)), "answer_tokens_mean",
                    "context_tokens_mean", "latency_p50_ms", "latency_p95_ms"):  # fmt: skip
            assert f"{mode}.{key}" in metrics, f"{mode}.{key}"
        assert 0 <= metrics[f"{mode}.j"] <= 1
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 12 and {r["mode"] for r in rows} == {"graph", "full_context", "episodes"}
    full = [r for r in rows if r["mode"] == "full_context"]
    assert all(r["context_tokens"] == full[0]["context_tokens"] > 0 for r in full), "the whole conversation"
    graph = {r["answer"]: r for r in rows if r["mode"] == "graph"}
    pixel = next(r for a, r in graph.items() if "Pixel" in a)
    assert pixel["correct"] and pixel["extra"]["calls"] == 3 and pixel["context_tokens"] > 0
    assert metrics["graph.j"] > 0 and metrics["graph.errors"] == 0
    assert any("scripted" in note for note in result["notes"])


def test_a_stored_graph_is_reused(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    argv = ["--conversation", str(path), "--sessions", "1", "--scripted", "--results-dir", str(tmp_path)]
    argv += ["--db", str(tmp_path / "qa.db"), "--questions", "1"]
    first = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
    again = json.loads(locomo_qa.main(argv).read_text(encoding="utf-8"))["metrics"]
    assert (first["ingested_episodes"], again["ingested_episodes"]) == (3, 0)
    assert first["graph.j"] == again["graph.j"]
