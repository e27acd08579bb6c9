"""Replaying a live run: the replies ``live_bench.py --save-replies`` wrote, answered again, in order.

``python bench/live_bench.py --replay replies.jsonl`` ingests the same turns with the recorded replies
(``replies.<set>.<mode>.jsonl``) instead of a model: each call gets the next recorded reply of its
prompt, checked against the episode it answered, so a change to how the pipeline HANDLES replies (checks,
guards, parsing, candidates it does not change) is measured on real output, exactly, in a minute. A change
to a prompt changes what the model would have written: that needs a live run. Results go to
``live_replay.json``, never over the live results.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import ScriptedLLM, ScriptedReply
from epigraph.testing.doubles import ScriptError


def replay_file(base: Path, gold_name: str, mode: str) -> Path:
    """Where ``--save-replies base`` wrote the replies of one gold set and mode."""
    return base.with_suffix(f".{gold_name}.{mode}.jsonl")


def _rows(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SystemExit(f"--replay: cannot read {path}: {exc}") from None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def recorded_turns(path: Path) -> int:
    """How many turns the recorded run ingested (its episodes, in order)."""
    return len(dict.fromkeys(row["episode"] for row in _rows(path)))


def replayed(path: Path) -> ScriptedLLM:
    """A model that answers each prompt with its next recorded reply (finish reason included)."""
    queues: dict[str, deque[dict[str, Any]]] = {}
    for row in _rows(path):
        queues.setdefault(row["prompt"], deque()).append(row)

    def answer(request: ChatRequest) -> ScriptedReply:
        queue = queues.get(request.prompt_name)
        if not queue:
            if request.prompt_name == "summarize_entities":  # a run stopped before its closing summary
                return ScriptedReply("{}")
            raise ScriptError(
                f"{path}: no recorded {request.prompt_name} reply left (the pipeline now asks more)"
            )
        row = queue.popleft()
        episode = str(request.variables.get("episode", ""))
        if row["episode"][:60] not in episode and episode[:60] not in row["episode"]:
            raise ScriptError(
                f"{path}: the next recorded {request.prompt_name} reply answered {row['episode'][:60]!r}, "
                f"not {episode[:60]!r} (the pipeline now asks differently)"
            )
        return ScriptedReply(row["text"], finish_reason=row["finish"] or "stop", chunk_size=7)

    return ScriptedLLM(answer, model=f"replay of {path.name}")
