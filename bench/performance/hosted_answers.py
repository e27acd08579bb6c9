"""The simulated provider's answers to our pipeline's prompts, read back from the HTTP request (the
server sees the rendered messages only: ``epigraph.testing.reading``).

- **Gold turns** (a turn of a gold set, found by its text): the scripted gold answers of
  ``bench/shared/gold.py``'s :class:`GoldScript`, the same the ingest bench's ScriptedLLM gives, so the graph
  built on the gold turns can be compared with ``bench/results/ingest.json``. What the pipeline showed
  the model is recorded there too (``GoldScript.shown``: the candidate-recall keys).
- **Volume turns**: ``hosted_world``'s reading of the message in the prompt's line format: names for
  ``extract_entities``, bracket lines among the given names for ``extract_facts``, both for
  ``extract_combined``; ``resolve_episode`` answers a name with the candidate of the same name and a fact
  with the candidate of the same sentence, else ``new``; summaries join an entity's last two facts.
- **Anything else** (ask's plan and answer, conversation summaries, communities): the serve harness's
  scripted world (``serve_harness.World``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench.performance.hosted_world import read
from bench.shared.gold import GoldScript, GoldSet, stored_sentence
from bench.shared.serve_harness import World
from epigraph.graph.model import normalize_name
from epigraph.pipeline.state import clip
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.grammar import NONE
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing.reading import Asked, asked_in, entity_name, episode_in, prompt_of, said

EXTRACTION = ("extract_entities", "extract_facts", "extract_combined")
CLIP_CHARS = 600
"""``IngestOptions.clip_chars``: how resolve_episode shows the episode (how a gold turn is found there)."""


class GoldAnswers:
    """The gold sets' scripts over HTTP: which script a request is about, and its answer."""

    def __init__(self, sets: Sequence[GoldSet]) -> None:
        self.scripts = {s.name: GoldScript(s.gold, s.turns, 0.0, 0.0) for s in sets}
        self._by_content: dict[str, GoldScript] = {}
        self._by_clip: dict[str, GoldScript] = {}
        self._sentences: dict[GoldScript, dict[str, str]] = {}
        for script in self.scripts.values():
            for content in script.by_content:
                self._by_content[content] = script
                self._by_clip[clip(content, CLIP_CHARS)] = script
            stored = [stored_sentence(f) for f in script.facts.values()]
            self._sentences[script] = {said(sentence): sentence for sentence in stored}

    def answer(self, prompt: str, body: dict[str, Any]) -> str | None:
        """The gold answer to a request about a gold turn; None for any other request."""
        if prompt in EXTRACTION:
            content = episode_in(body)
            script = self._by_content.get(content)
            if script is None:
                return None
            speaker, _, _ = content.partition(": ")
            return str(getattr(script, prompt)(ExtractionInput.of(content, speaker)))
        if prompt == "resolve_episode":
            script = self._by_clip.get(_resolved_episode(body))
            return None if script is None else script.resolve_episode(self._resolve_variables(script, body))
        return None  # summaries: GoldScript's are the volume ones (an entity's last two facts)

    def _resolve_variables(self, script: GoldScript, body: dict[str, Any]) -> dict[str, Any]:
        """The request's items as the ScriptedLLM is given them (``ResolveEpisodeInput``'s fields):
        shown sentences mapped back to the stored ones the gold is keyed by."""
        entities, facts = asked_in(body)
        stored = self._sentences[script]

        def sentence(text: str) -> str:
            return stored.get(text, text)

        named = []
        for q in entities:
            candidates = [{"id": c, "name": entity_name(shown)} for c, shown in q.candidates.items()]
            named.append({"id": q.id, "name": q.text, "candidates": candidates})
        asked = []
        for f in facts:
            candidates = [{"id": c, "fact": sentence(shown)} for c, shown in f.candidates.items()]
            asked.append({"id": f.id, "fact": sentence(f.text), "candidates": candidates})
        return {"entities": named, "facts": asked}


def _resolved_episode(body: dict[str, Any]) -> str:
    """The (clipped) episode a resolve_episode request shows on its ``Message:`` line."""
    last = str(body["messages"][-1]["content"])
    head = last.split("\nNames:\n", 1)[0].split("\nFacts:\n", 1)[0]
    return head.removeprefix("Message: ")


def _entities(body: dict[str, Any]) -> list[dict[str, Any]]:
    shown = str(body["messages"][-1]["content"]).split("Entities: ", 1)[1]
    entities: list[dict[str, Any]] = json.loads(shown)
    return entities


class VolumeAnswers:
    """Plausible answers for turns without gold (module docstring)."""

    def answer(self, prompt: str, body: dict[str, Any]) -> str:
        if prompt in EXTRACTION:
            content = episode_in(body)
            speaker, _, text = content.partition(": ")
            reading = read(speaker, text)
            if prompt == "extract_entities":
                return "; ".join(reading.names) or NONE
            given = _given_names(body) if prompt == "extract_facts" else reading.names
            lines = self._fact_lines(reading, given)
            if prompt == "extract_combined":
                named = {normalize_name(n) for f in reading.facts for n in (f.source, f.target)}
                lines += [f"[{n}]" for n in reading.names if normalize_name(n) not in named]
            return "\n".join(lines) or NONE
        if prompt == "resolve_episode":
            entities, facts = asked_in(body)
            return "\n".join([*(self._entity(q) for q in entities), *(self._fact(f) for f in facts)])
        if prompt == "summarize_entities":
            summaries = [{"id": e["id"], "summary": " ".join(e["facts"][-2:])} for e in _entities(body)]
            return json.dumps({"summaries": summaries})
        raise ValueError(f"no volume answer for prompt {prompt!r}")

    @staticmethod
    def _fact_lines(reading: Any, given: Sequence[str]) -> list[str]:
        by_key = {normalize_name(n): n for n in given}
        lines = []
        for fact in reading.facts:
            source, target = by_key.get(normalize_name(fact.source)), by_key.get(normalize_name(fact.target))
            if source and target and source != target:
                sentence = fact.sentence.replace(fact.source, source, 1).replace(fact.target, target, 1)
                lines.append(write_fact(sentence, source, target, fact.relation))
        return lines

    @staticmethod
    def _entity(question: Asked) -> str:
        wanted = normalize_name(question.text)
        same = [c for c, shown in question.candidates.items() if normalize_name(entity_name(shown)) == wanted]
        return f"{question.id} {same[0] if same else 'new'}"

    @staticmethod
    def _fact(question: Asked) -> str:
        same = [c for c, shown in question.candidates.items() if shown == question.text]
        return verdict_line(question.id, same[:1])


def _given_names(body: dict[str, Any]) -> list[str]:
    """The names an extract_facts request gives (its ``Names:`` line, comma-separated)."""
    last = str(body["messages"][-1]["content"])
    line = next((ln for ln in last.splitlines() if ln.startswith("Names: ")), "Names: ")
    return [n.strip() for n in line.removeprefix("Names: ").split(",") if n.strip()]


class EpigraphAnswers:
    """Gold answers where a gold turn is asked about, volume answers elsewhere, the scripted world for
    the prompts of asking and upkeep. Counts what it answered (``answered``: prompt -> calls; ``gold``:
    calls answered from a gold set)."""

    def __init__(self, gold: Sequence[GoldSet]) -> None:
        self.gold = GoldAnswers(gold)
        self.volume = VolumeAnswers()
        self.world = World()
        self.answered: dict[str, int] = {}
        self.gold_calls = 0

    def handles(self, body: dict[str, Any]) -> bool:
        return prompt_of(body) is not None or _system(body).startswith(WORLD_PROMPTS)

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = prompt_of(body)
        name = prompt or _system(body)[:40]
        self.answered[name] = self.answered.get(name, 0) + 1
        if prompt is None:
            return self.world(body).text
        answer = self.gold.answer(prompt, body)
        if answer is not None:
            self.gold_calls += 1
            return answer
        return self.volume.answer(prompt, body)


WORLD_PROMPTS = (
    "You plan lookups",
    "Answer the question",
    "Each community below",
    "You keep the running summary",
)
"""The system prompts ``serve_harness.World`` answers: ask's plan and answer, communities, conversations."""


def _system(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    return str(messages[0].get("content", "")) if messages[0].get("role") == "system" else ""
