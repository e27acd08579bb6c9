"""Replaying a live run: the replies ``live.py --save-replies`` wrote, answered again, in order.

``python -m bench live --replay replies.jsonl`` ingests the same turns with the recorded replies
(``replies.<set>.<mode>.jsonl``) instead of a model: each call gets the next recorded reply of its
prompt for its episode, so a change to how the pipeline HANDLES replies (checks, guards, parsing) is
measured on real output, exactly, in a minute; an episode the change makes ask other calls fails alone,
saying so. A change to a prompt, or to the candidates shown (a reply's ids mean what it was shown),
changes what the model would have written: that needs a live run. Results go to ``live_replay.json``,
never over the live results.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from bench.quality.live_calls import is_about
from epigraph.pipeline.metering import asked_about
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
    """A model that answers each call with the next recorded reply of its prompt FOR ITS EPISODE (finish
    reason included): a change that makes one episode ask differently fails that episode, not the rest."""
    queues: dict[tuple[str, str], deque[dict[str, Any]]] = {}
    for row in _rows(path):
        if row["prompt"] is None:  # an episode that made no call of its own
            continue
        queues.setdefault((row["prompt"], row["episode"]), deque()).append(row)

    def answer(request: ChatRequest) -> ScriptedReply:
        # the extraction prompts carry the message, resolution the episode; summaries neither: any episode's
        episode = asked_about(request)
        for (prompt, said), queue in queues.items():
            if prompt == request.prompt_name and queue and is_about(episode, said):
                row = queue.popleft()
                return ScriptedReply(row["text"], finish_reason=row["finish"] or "stop", chunk_size=7)
        if request.prompt_name == "summarize_entities":  # a run stopped before its closing summary
            return ScriptedReply("{}")
        raise ScriptError(
            f"{path}: no recorded {request.prompt_name} reply (left) for the episode {episode[:60]!r}: "
            "the pipeline asks differently now"
        )

    return ScriptedLLM(answer, model=f"replay of {path.name}")
