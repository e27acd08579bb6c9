"""The simulated provider's answers to Graphiti's prompts (graphiti-core 0.31.2, read from its source:
``prompts/extract_nodes.py``, ``dedupe_nodes.py``, ``extract_edges.py``, ``dedupe_edges.py``,
``utils/maintenance/node_operations.py``).

Graphiti's OpenAI-compatible client asks for ``response_format: json_schema`` named after the response
model (``ExtractedEntities``, ``NodeResolutions``, ``ExtractedEdges``, ``EdgeDuplicate``,
``SummarizedEntities``, ...). Each is answered from ``hosted_world``'s reading of the message, the same
reading our pipeline gets, so both do the same work per message:

- ``ExtractedEntities``: the reading's names of each episode of ``<CURRENT MESSAGE>`` (``[Episode N]``
  headers in bulk; context episodes skipped), with their ``episode_indices``;
- ``ExtractedEdges``: the reading's facts whose two ends are in ``<ENTITIES>``;
- ``CombinedExtraction`` (bulk): both at once, from ``<CURRENT MESSAGES>``;
- ``NodeResolutions`` / ``NodeDuplicate``: the existing entity of the same name, else ``-1``;
- ``EdgeDuplicate``: the existing facts of the same sentence, contradicting none;
- ``SummarizedEntities`` / ``Summary`` / ``SummaryDescription``: a sentence naming the entity;
- ``EdgeTimestamps`` / ``BatchEdgeTimestamps``: no dates (the volume turns' facts carry none);
- any other schema (an entity type's attributes): the smallest object the schema accepts.

Every answer validates against the request's schema; a reply Graphiti cannot parse is this module's bug.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from bench.performance.hosted_world import Reading, read
from epigraph.graph.model import normalize_name

_EPISODE = re.compile(r"^\[(?:Episode (\d+)|CONTEXT EPISODE)\][^\n]*\n", re.M)


def schema_name(body: Mapping[str, Any]) -> str | None:
    """The response model a request asks for (``response_format.json_schema.name``), or None."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") != "json_schema":
        return None
    name = (fmt.get("json_schema") or {}).get("name")
    return str(name) if name else None


class GraphitiAnswers:
    """Answers by response model (module docstring); ``answered`` counts them by model name."""

    def __init__(self) -> None:
        self.answered: dict[str, int] = {}

    def __call__(self, body: Mapping[str, Any]) -> str:
        name = schema_name(body) or "?"
        self.answered[name] = self.answered.get(name, 0) + 1
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages") or [])
        answer = getattr(self, _METHODS.get(name, ""), None)
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        value = answer(text) if answer is not None else smallest(schema, schema)
        return json.dumps(value)

    # -- extraction ----------------------------------------------------------------------------

    def extracted_entities(self, text: str) -> dict[str, Any]:
        return {"extracted_entities": self._entities(_tag(text, "CURRENT MESSAGE"))}

    @staticmethod
    def _entities(block: str) -> list[dict[str, Any]]:
        entities: dict[str, dict[str, Any]] = {}
        for index, reading in _readings(block):
            for name in reading.names:
                entry = entities.setdefault(
                    normalize_name(name), {"name": name, "entity_type_id": 0, "episode_indices": []}
                )
                entry["episode_indices"].append(index)
        return list(entities.values())

    def combined_extraction(self, text: str) -> dict[str, Any]:
        block = _tag(text, "CURRENT MESSAGES")
        entities = self._entities(block)
        given = {normalize_name(e["name"]): e["name"] for e in entities}
        return {"extracted_entities": entities, "edges": _edges(block, given)}

    def extracted_edges(self, text: str) -> dict[str, Any]:
        given = {normalize_name(str(n.get("name", ""))): str(n.get("name")) for n in _json(text, "ENTITIES")}
        return {"edges": _edges(_tag(text, "CURRENT_MESSAGE"), given)}

    # -- resolution ----------------------------------------------------------------------------

    def node_resolutions(self, text: str) -> dict[str, Any]:
        existing = _existing_names(_json(text, "EXISTING ENTITIES"))
        resolutions = [
            {
                "id": int(node["id"]),
                "name": str(node["name"]),
                "duplicate_candidate_id": existing.get(normalize_name(str(node["name"])), -1),
            }
            for node in _json(text, "ENTITIES")
        ]
        return {"entity_resolutions": resolutions}

    def node_duplicate(self, text: str) -> dict[str, Any]:
        node = json.loads(_tag(text, "NEW ENTITY") or "{}")
        name = str(node.get("name", "")) if isinstance(node, dict) else ""
        existing = _existing_names(_json(text, "EXISTING ENTITIES"))
        return {"id": 0, "name": name, "duplicate_candidate_id": existing.get(normalize_name(name), -1)}

    def edge_duplicate(self, text: str) -> dict[str, Any]:
        new = normalize_name(_tag(text, "NEW FACT"))
        existing = _python_list(_tag(text, "EXISTING FACTS"))
        same = [int(f["idx"]) for f in existing if normalize_name(str(f.get("fact", ""))) == new]
        return {"duplicate_facts": same, "contradicted_facts": []}

    # -- dates and summaries -------------------------------------------------------------------

    def edge_timestamps(self, text: str) -> dict[str, Any]:
        return {"valid_at": None, "invalid_at": None}

    def batch_edge_timestamps(self, text: str) -> dict[str, Any]:
        facts = _json(text, "FACTS")
        return {"timestamps": [{"valid_at": None, "invalid_at": None} for _ in facts]}

    def summarized_entities(self, text: str) -> dict[str, Any]:
        summaries = [
            {"name": str(e["name"]), "summary": f"{e['name']} was mentioned in the conversation."}
            for e in _json(text, "ENTITIES")
        ]
        return {"summaries": summaries}

    def summary(self, text: str) -> dict[str, Any]:
        return {"summary": "Mentioned in the conversation."}

    def summary_description(self, text: str) -> dict[str, Any]:
        return {"description": "An entity of the conversation."}


_METHODS = {
    "ExtractedEntities": "extracted_entities",
    "ExtractedEdges": "extracted_edges",
    "CombinedExtraction": "combined_extraction",
    "NodeResolutions": "node_resolutions",
    "NodeDuplicate": "node_duplicate",
    "EdgeDuplicate": "edge_duplicate",
    "EdgeTimestamps": "edge_timestamps",
    "BatchEdgeTimestamps": "batch_edge_timestamps",
    "SummarizedEntities": "summarized_entities",
    "Summary": "summary",
    "SummaryDescription": "summary_description",
}
"""Graphiti's response model -> the method answering it."""


def _edges(block: str, given: Mapping[str, str]) -> list[dict[str, Any]]:
    """The reading's facts of each episode whose two ends are ``given`` (normalized name -> name)."""
    edges = []
    for index, reading in _readings(block):
        for fact in reading.facts:
            source = given.get(normalize_name(fact.source))
            target = given.get(normalize_name(fact.target))
            if source and target and source != target:
                edges.append(
                    {
                        "source_entity_name": source,
                        "target_entity_name": target,
                        "relation_type": fact.relation,
                        "fact": fact.sentence + ".",
                        "valid_at": None,
                        "invalid_at": None,
                        "episode_indices": [index],
                    }
                )
    return edges


def _readings(block: str) -> list[tuple[int, Reading]]:
    """(episode index, reading) for each episode of a ``<CURRENT MESSAGE>`` block."""
    heads = list(_EPISODE.finditer(block))
    if not heads:
        return [(0, _read(block))]
    out = []
    for head, following in zip(heads, [*heads[1:], None], strict=True):
        if head.group(1) is None:
            continue  # a context episode: for reference only
        body = block[head.end() : following.start() if following else len(block)]
        out.append((int(head.group(1)), _read(body)))
    return out


def _read(content: str) -> Reading:
    speaker, _, text = content.strip().partition(": ")
    return read(speaker, text) if text else read("speaker", speaker)


def _tag(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return found.group(1).strip() if found else ""


def _json(text: str, tag: str) -> list[dict[str, Any]]:
    raw = _tag(text, tag).split("\n")[0] if tag == "ENTITIES" else _tag(text, tag)
    try:
        value = json.loads(raw or "[]")
    except json.JSONDecodeError:
        return []
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _python_list(raw: str) -> list[dict[str, Any]]:
    """A list Graphiti's prompt shows with Python's repr (``[{'idx': 0, 'fact': ...}]``)."""
    try:
        value = ast.literal_eval(raw or "[]")
    except (ValueError, SyntaxError):
        return []
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _existing_names(existing: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for candidate in existing:
        out.setdefault(normalize_name(str(candidate.get("name", ""))), int(candidate.get("candidate_id", -1)))
    return out


def smallest(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """The smallest value a JSON schema accepts: required fields only, empty lists, nulls when allowed."""
    if "$ref" in schema:
        target: Any = root
        for part in str(schema["$ref"]).lstrip("#/").split("/"):
            target = target[part]
        return smallest(target, root)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if any(o.get("type") == "null" for o in options):
            return None
        return smallest(options[0], root)
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: smallest(props[k], root) for k in schema.get("required") or [] if k in props}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False, "null": None}.get(
        str(kind), None
    )
