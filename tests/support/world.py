"""A tiny scripted world for the pipeline and queue tests (and others that ingest): what a careful
model would answer, keyed by episode text.

``World`` answers every prompt of the pipeline through a ScriptedLLM: extraction by the episode's
content, resolution from declared aliases, duplicates and contradictions (by fact sentence), dating
from declared expressions. Tests declare the world; the pipeline must build the right graph from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from epigraph.pipeline.dating import without_iso_dates
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import read_fact, time_words, write_fact, write_name
from epigraph.prompts.grammar import NONE
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import ScriptedLLM, ScriptedReply

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
"""When the world's episodes are said, unless a test says otherwise (the pipeline and queue tests)."""


@dataclass(frozen=True)
class F:
    """One fact as the model would state it (its line: :func:`fact_line`)."""

    source: str
    target: str
    relation: str
    fact: str
    valid_at: str | None = None
    invalid_at: str | None = None
    expression: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def line(self, types: Mapping[str, E] | None = None) -> str:
        return fact_line(self, types or {})


@dataclass(frozen=True)
class E:
    name: str
    type: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def written(self) -> str:
        return write_name(self.name, self.type, dict(self.attributes))


def _stored(f: F) -> str:
    """The text the pipeline stores for ``f``'s line."""
    return without_iso_dates(read_fact(fact_line(f, {})).sentence)


def episode_of(variables: Mapping[str, Any]) -> str:
    """The episode an extraction call was about ("Speaker: text")."""
    return ExtractionInput.model_validate(variables).content()


def fact_line(f: F, types: Mapping[str, E]) -> str:
    """The bracket line of ``f`` (``fact_lines.write_fact``): its dates and expression as time words
    after it, which the pipeline reads back."""
    when = time_words(f.valid_at, f.invalid_at)
    if f.expression and f.expression.casefold() not in f.fact.casefold():
        when += f" {f.expression}"
    written = {e.name: e.written() for e in types.values()}
    written.update({n: types[n.casefold()].written() for n in (f.source, f.target) if n.casefold() in types})
    return write_fact(f.fact, f.source, f.target, f.relation, when, dict(f.attributes), written)


@dataclass
class Turn:
    entities: Sequence[E | str] = ()
    facts: Sequence[F] = ()

    def ents(self) -> list[E]:
        return [e if isinstance(e, E) else E(e) for e in self.entities]


@dataclass
class World:
    turns: dict[str, Turn] = field(default_factory=dict)
    same_as: dict[str, str] = field(default_factory=dict)
    """entity name -> the earlier name it is an alias of (answers of resolve_episode)"""
    duplicates: dict[str, list[str]] = field(default_factory=dict)
    """fact sentence -> earlier sentences it restates"""
    contradicts: dict[str, list[str]] = field(default_factory=dict)
    """fact sentence -> earlier sentences it retires"""
    latency: float = 0.0
    overrides: dict[str, Callable[[ChatRequest], str | ScriptedReply]] = field(default_factory=dict)

    def llm(self) -> ScriptedLLM:
        return ScriptedLLM(self.answer)

    def answer(self, request: ChatRequest) -> ScriptedReply:
        handler = self.overrides.get(request.prompt_name)
        reply = handler(request) if handler else getattr(self, request.prompt_name)(request.variables)
        if isinstance(reply, ScriptedReply):
            return reply
        return ScriptedReply(reply, delay_s=self.latency, chunk_size=24, chunk_delay_s=self.latency / 20)

    def turn(self, variables: Mapping[str, Any]) -> Turn:
        return self.turns.get(episode_of(variables), Turn())

    def extract_entities(self, v: Mapping[str, Any]) -> str:
        return "\n".join(e.written() for e in self.turn(v).ents()) or NONE

    def extract_facts(self, v: Mapping[str, Any]) -> str:
        return "\n".join(f.line() for f in self.turn(v).facts) or NONE

    def extract_combined(self, v: Mapping[str, Any]) -> str:
        """Fact lines (names typed as the turn types them), then a bare ``[name]`` line for each entity
        no fact names."""
        turn = self.turn(v)
        types = {e.name.casefold(): e for e in turn.ents() if e.type or e.attributes}
        named = {n.casefold() for f in turn.facts for n in (f.source, f.target)}
        alone = [f"[{e.written()}]" for e in turn.ents() if e.name.casefold() not in named]
        return "\n".join([*(f.line(types) for f in turn.facts), *alone]) or NONE

    def extract_window(self, v: Mapping[str, Any]) -> str:
        """Each numbered turn's combined lines, led by its number and speaker (``<n> none`` if none)."""
        lines = []
        for n, turn in enumerate(v["turns"], start=1):
            content = f"{turn['speaker']}: {turn['message']}" if turn["speaker"] else turn["message"]
            lead = f"{n} {turn['speaker']}: " if turn["speaker"] else f"{n} "
            own = self.extract_combined(ExtractionInput.of(content, turn["speaker"] or None)).splitlines()
            lines += [f"{lead}{line}" for line in own]
        return "\n".join(lines)

    def same_as_candidate(self, question: Mapping[str, Any]) -> str | None:
        wanted = self.same_as.get(question["name"], "").casefold()
        found = (c["id"] for c in question["candidates"] if wanted and c["name"].casefold() == wanted)
        return next(found, None)

    def fact_verdict(self, item: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """(duplicate ids, contradicted ids) among the candidates of one new fact (the world's
        sentences, as the facts' stored texts read with their time words)."""
        said = self.said(item["fact"])
        dup = set(self.duplicates.get(said, []))
        con = set(self.contradicts.get(said, []))
        return (
            [c["id"] for c in item["candidates"] if self.said(c["fact"]) in dup],
            [c["id"] for c in item["candidates"] if self.said(c["fact"]) in con],
        )

    def said(self, stored: str) -> str:
        """The world's sentence of a stored fact text (its line may have added time words)."""
        for turn in self.turns.values():
            for f in turn.facts:
                if stored == f.fact or stored == _stored(f):
                    return f.fact
        return stored

    def resolve_episode(self, v: Mapping[str, Any]) -> str:
        """One decision line per item of the one resolve call, as ``prompts.resolve_episode`` reads."""
        lines = [f"{q['id']} {self.same_as_candidate(q) or 'new'}" for q in v["entities"]]
        for item in v["facts"]:
            lines.append(verdict_line(item["id"], *self.fact_verdict(item)))
        return "\n".join(lines)

    def summarize_entities(self, v: Mapping[str, Any]) -> str:
        out = [{"id": e["id"], "summary": f"{e['name']}: " + " ".join(e["facts"])} for e in v["entities"]]
        return json.dumps({"summaries": out})


OSLO = "Ann: I live in Oslo with Bo."
OSLO_WORLD = {
    OSLO: Turn(
        ["Ann", "Oslo", "Bo"],
        [
            F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo."),
            F("Ann", "Bo", "LIVES_WITH", "Ann lives with Bo."),
        ],
    )
}
"""One turn: three entities, two facts (the queue's retry tests and the pipeline's partial replies)."""


def hobbies(n: int) -> dict[str, Turn]:
    """One turn giving Ann and Bo ``n`` hobbies each: two entities big enough for a summary call."""
    names = ["chess", "golf", "judo", "yoga", "rowing", "poetry"][:n]
    facts = [F("Ann", h, "ENJOYS", f"Ann enjoys {h}.") for h in names]
    facts += [F("Bo", h, "ENJOYS", f"Bo enjoys {h}.") for h in names]
    return {"Ann and Bo: hobbies " + ", ".join(names): Turn(["Ann", "Bo", *names], facts)}
