"""The scripted model of ``locomo_qa.py --scripted``: every prompt the harness sends (ingestion, the ask
agent, the baselines' answers, the judge) answered deterministically and offline, so the harness itself
runs end to end in the test suite. Its J figures measure the plumbing, not a model.

- ingestion: the speaker and the capitalized words of a turn are its entities; a turn naming someone or
  something other than its speaker becomes one fact ``"<Speaker> said: <text>"``; nothing is merged
  unless the names match, nothing retired, no dates;
- ``ask_plan``: one fact search of the question, then answer;
- ``ask_answer``: the fact or episode shown that shares the most words with the question, cited; when
  none shares a word, "[none]" (so ``auto`` falls back to the agent);
- ``qa_judge``: CORRECT when at least half of the gold answer's words appear in the answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.grammar import NONE
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import ScriptedLLM

_WORD = re.compile(r"[A-Za-z0-9']+")
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
_COMMON = {"The", "This", "That", "What", "When", "Where", "Thanks", "Hey", "Yes", "Wow", "And", "But"}
_SHOWN = re.compile(r"^([FE]\d+)(?: \[[^\]]*\])?: (.*?)(?: \(from .*\))?$")


def _speaker_text(episode: str) -> tuple[str, str]:
    speaker, _, text = episode.partition(": ")
    return (speaker, text) if text else ("someone", episode)


def _names(episode: str) -> list[str]:
    speaker, text = _speaker_text(episode)
    others = [n for n in dict.fromkeys(_NAME.findall(text)) if n not in _COMMON and n != speaker]
    return [speaker, *others[:2]]


def _facts(episode: str) -> list[str]:
    """The turn's one fact line, when it names someone or something besides its speaker."""
    speaker, text = _speaker_text(episode)
    names = _names(episode)
    if len(names) < 2:
        return []
    return [write_fact(f"{speaker} said: {text}", speaker, names[1], "MENTIONED")]


def _words(text: str) -> set[str]:
    return {w.lower().removesuffix("'s") for w in _WORD.findall(text)}


_QUESTION_WORDS = {"what", "when", "where", "who", "which", "how", "why", "did", "does", "do", "is", "was",
                   "the", "a", "an", "of", "to", "in", "on", "would"}  # fmt: skip


def answer(request: ChatRequest) -> str:
    v: Any = request.variables
    name = request.prompt_name
    if name in ("extract_entities", "extract_facts", "extract_combined"):
        episode = ExtractionInput.model_validate(v).content()
        if name == "extract_entities":
            return "; ".join(_names(episode))
        alone = [f"[{n}]" for n in _names(episode)] if name == "extract_combined" else []
        return "\n".join(_facts(episode) or alone) or NONE
    if name == "resolve_episode":
        lines = [
            f"{q['id']} {next((c['id'] for c in q['candidates'] if _same(c, q)), 'new')}"
            for q in v["entities"]
        ]
        for f in v["facts"]:
            lines.append(verdict_line(f["id"], [c["id"] for c in f["candidates"] if c["fact"] == f["fact"]]))
        return "\n".join(lines)
    if name == "summarize_entities":
        return json.dumps(
            {"summaries": [{"id": e["id"], "summary": " ".join(e["facts"][:2])} for e in v["entities"]]}
        )
    return _asking(name, v)


def _asking(name: str, v: Any) -> str:
    if name == "ask_plan":
        if v["observations"] == "(nothing yet)":
            return json.dumps(
                {"thought": "Search the question.", "action": "search_facts", "query": v["question"]}
            )
        return json.dumps({"thought": "Answer from what was found.", "action": "answer"})
    if name == "ask_answer":
        asked = _words(v["question"]) - _QUESTION_WORDS
        shown = [
            m for line in [*v["facts"].splitlines(), *v["episodes"].splitlines()] if (m := _SHOWN.match(line))
        ]
        best = max(shown, key=lambda m: len(asked & _words(m[2])), default=None)
        if best is None or not asked & _words(best[2]):
            return "Nothing shown answers this. [none]"
        return f"{best[2]} [{best[1]}]"
    if name == "qa_judge":
        gold = _words(v["gold_answer"])
        hit = len(gold & _words(v["generated_answer"])) * 2 >= len(gold) > 0
        return json.dumps({"reasoning": "word overlap", "label": "CORRECT" if hit else "WRONG"})
    if name == "model_speed":
        return "1\n2\n3"
    raise KeyError(f"the QA script has no answer for prompt {name!r}")


def scripted_llm() -> ScriptedLLM:
    return ScriptedLLM(answer, model="scripted-qa")


def _same(candidate: dict[str, Any], asked: dict[str, Any]) -> bool:
    return bool(candidate["name"].casefold() == asked["name"].casefold())
