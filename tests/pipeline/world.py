"""A tiny scripted world for pipeline tests: what a careful model would answer, keyed by episode text.

``World`` answers every prompt of the pipeline through a ScriptedLLM: extraction by the episode's
content, resolution from declared aliases, duplicates and contradictions (by fact sentence), dating
from declared expressions. Tests declare the world; the pipeline must build the right graph from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from epigraph.prompts.protocol import ChatRequest
from epigraph.testing import ScriptedLLM, ScriptedReply


@dataclass(frozen=True)
class F:
    """One fact line as the model would write it."""

    source: str
    target: str
    relation: str
    fact: str
    valid_at: str | None = None
    invalid_at: str | None = None
    expression: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def line(self, tagged: bool = False) -> str:
        data = {
            "source": self.source, "target": self.target, "relation": self.relation, "fact": self.fact,
            "valid_at": self.valid_at, "invalid_at": self.invalid_at, "temporal_expression": self.expression,
        }  # fmt: skip
        if self.attributes:
            data["attributes"] = dict(self.attributes)
        return json.dumps({"type": "fact", **data} if tagged else data)


@dataclass(frozen=True)
class E:
    name: str
    type: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def line(self, tagged: bool = False) -> str:
        data = {"name": self.name, "entity_type": self.type, "attributes": dict(self.attributes)}
        return json.dumps({"type": "entity", **data} if tagged else data)


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
    dates: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """temporal expression -> (valid_at, invalid_at) answered by date_fact"""
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
        return self.turns.get(variables["episode"], Turn())

    def extract_entities(self, v: Mapping[str, Any]) -> str:
        return "\n".join(e.line() for e in self.turn(v).ents())

    def extract_facts(self, v: Mapping[str, Any]) -> str:
        return "\n".join(f.line() for f in self.turn(v).facts)

    def extract_combined(self, v: Mapping[str, Any]) -> str:
        turn = self.turn(v)
        return "\n".join([*(e.line(True) for e in turn.ents()), *(f.line(True) for f in turn.facts)])

    def resolve_entity(self, v: Mapping[str, Any]) -> str:
        wanted = self.same_as.get(v["entity"]["name"], "").casefold()
        match = next((c["id"] for c in v["candidates"] if wanted and c["name"].casefold() == wanted), None)
        return json.dumps({"reasoning": "compared names", "duplicate_of": match, "name": None})

    def resolve_fact(self, v: Mapping[str, Any]) -> str:
        decisions = []
        for item in v["facts"]:
            dup = set(self.duplicates.get(item["fact"], []))
            con = set(self.contradicts.get(item["fact"], []))
            decisions.append({
                "id": item["id"], "reasoning": "compared",
                "duplicate_of": [c["id"] for c in item["candidates"] if c["fact"] in dup],
                "contradicts": [c["id"] for c in item["candidates"] if c["fact"] in con],
            })  # fmt: skip
        return json.dumps({"decisions": decisions})

    def resolve_episode(self, v: Mapping[str, Any]) -> str:
        """Both parts of the one resolve call, answered as the two questions above."""
        entities = [
            {"id": q["id"], **json.loads(self.resolve_entity({"entity": q, "candidates": q["candidates"]}))}
            for q in v["entities"]
        ]
        facts = json.loads(self.resolve_fact(v))["decisions"]
        return json.dumps({"entities": entities, "facts": facts})

    def date_fact(self, v: Mapping[str, Any]) -> str:
        out = []
        for item in v["facts"]:
            valid, invalid = self.dates.get(item["expression"], (None, None))
            out.append({"id": item["id"], "valid_at": valid, "invalid_at": invalid})
        return json.dumps({"dates": out})

    def summarize_entities(self, v: Mapping[str, Any]) -> str:
        out = [{"id": e["id"], "summary": f"{e['name']}: " + " ".join(e["facts"])} for e in v["entities"]]
        return json.dumps({"summaries": out})
