"""Reading the pipeline's rendered prompts back, for fake servers that answer over HTTP.

A fake OpenAI-compatible server sees only the messages of a request, not the prompt's typed input (a
``ScriptedLLM`` sees ``request.variables``). These helpers recover what a scripted world answers by:
which prompt it is (by its system message), the episode an extraction call is about, and the items a
``resolve_episode`` call asks about. They read exactly the layout the templates write (the last user
message holds the episode; ``prompts.extraction``, ``prompts.resolve_episode``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_MESSAGE = re.compile(r"Speaker: (?P<speaker>[^\n]+)\nMessage: (?P<text>.*)\Z", re.S)
_TEXT = re.compile(r"Text: (?P<text>.*)\Z", re.S)
_ENTITY = re.compile(r"^(?P<id>E\d+) (?P<name>.*?): (?P<candidates>(?P=id)\.1 .*)$")
_FACT = re.compile(
    r"^(?P<id>\d+) (?P<fact>.*?)(?: \((?:from|until) [^()]*\))?: (?P<candidates>(?P=id)\.1 .*)$"
)
_WHEN = re.compile(r" \((?:from|until) [^()]*\)$")

SYSTEM_STARTS = {
    "extract_combined": "You turn a message into facts",
    "extract_entities": "You list what a message talks about",
    "extract_facts": "You turn a message into facts for a knowledge graph. Write each fact the message "
    "states between two of the given names",
    "resolve_episode": "You keep a knowledge graph up to date",
    "summarize_entities": "Write a summary",
}


def prompt_of(body: Mapping[str, Any]) -> str | None:
    """Which pipeline prompt a request body is, by its system message (None: another one)."""
    system = str(body["messages"][0]["content"])
    found = [name for name, start in SYSTEM_STARTS.items() if system.startswith(start)]
    return max(found, key=lambda name: len(SYSTEM_STARTS[name]), default=None)


def episode_in(body: Mapping[str, Any]) -> str:
    """The episode an extraction request is about, as stored ("Speaker: text" for a message)."""
    last = str(body["messages"][-1]["content"])
    if (m := _MESSAGE.search(last)) is not None:
        return f"{m['speaker']}: {m['text']}"
    if (m := _TEXT.search(last)) is not None:
        return m["text"]
    raise ValueError(f"no episode in the last message: {last[-200:]!r}")


@dataclass(frozen=True)
class Asked:
    """One item of a resolve_episode request: an entity name or a fact, with its candidates
    (id -> the candidate's name or fact sentence, as shown)."""

    id: str
    text: str
    candidates: dict[str, str]


def _candidates(shown: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in shown.split(" | "):
        cid, _, text = part.partition(" ")
        out[cid] = _WHEN.sub("", text)
    return out


def asked_in(body: Mapping[str, Any]) -> tuple[list[Asked], list[Asked]]:
    """(entity questions, fact questions) of a resolve_episode request, in the order asked. An entity
    candidate's text is its name followed by its summary in parentheses, when it has one."""
    entities: list[Asked] = []
    facts: list[Asked] = []
    for line in str(body["messages"][-1]["content"]).splitlines():
        if (m := _ENTITY.match(line)) is not None:
            entities.append(Asked(m["id"], m["name"], _candidates(m["candidates"])))
        elif (m := _FACT.match(line)) is not None:
            facts.append(Asked(m["id"], m["fact"], _candidates(m["candidates"])))
    return entities, facts


def entity_name(shown: str) -> str:
    """A shown entity candidate's name, without its summary."""
    return re.sub(r" \(.*\)$", "", shown)


def said(sentence: str) -> str:
    """A fact sentence as resolve_episode shows it (no final stop), to compare with ``Asked.text``."""
    return sentence.rstrip(" .!")


__all__: Sequence[str] = ["Asked", "asked_in", "entity_name", "episode_in", "prompt_of", "said"]
