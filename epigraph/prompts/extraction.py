"""What the three extraction prompts share: their input (who says it, the message, a little context,
the declared types) and the items their lines decode to.

The fixed part of each prompt (instructions, examples, declared types) comes first and the episode
last, so a server that caches prompt prefixes (llama.cpp) evaluates only the new message: with the
local model on 2 cores, a call reads its ~25-40 new tokens instead of the whole prompt.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .fact_lines import FactParts, NamePart, read_line, unseen_scripts
from .grammar import NONE
from .said_clause import said_clause

MESSAGE_HEADING = "Speaker: {speaker}\nMessage:"
TEXT_HEADING = "Text:"


class ExtractionInput(BaseModel):
    """One episode as the extraction prompts show it."""

    who: str = Field(description="'Speaker: <name>' and 'Message:' lines, or 'Text:' for a document.")
    message: str = Field(description="The episode's text (a message without its speaker prefix).")
    context: str = Field(default="", description="Earlier episodes as a block ending in a blank line, or ''.")
    types: str = Field(
        default="", description="The declared entity and relation types as instructions, or ''."
    )
    type_names: list[str] = Field(default_factory=list, exclude=True)
    entity_attributes: list[str] = Field(default_factory=list, exclude=True)
    relation_attributes: list[str] = Field(default_factory=list, exclude=True)
    sentences_from_message: bool = Field(
        default=False,
        exclude=True,
        description="A fact's sentence is the message's clause naming both its ends, when one does.",
    )

    @classmethod
    def of(cls, content: str, speaker: str | None, **fields: Any) -> dict[str, Any]:
        """The fields for an episode's ``content`` (a message reads "Speaker: text")."""
        prefix = f"{speaker}:" if speaker else ""
        if speaker and content.lstrip().startswith(prefix):
            text = content.lstrip()[len(prefix) :].strip()
            return {"who": MESSAGE_HEADING.format(speaker=speaker), "message": text, **fields}
        return {"who": TEXT_HEADING, "message": content, **fields}

    def barred(self) -> str:
        """What a grammar keeps out of the reply's free text: the wide scripts this input does not use
        (:func:`~.fact_lines.unseen_scripts`)."""
        return unseen_scripts(f"{self.who} {self.message} {self.context}")

    def speaker(self) -> str | None:
        """Who says the message; None for a document."""
        first = self.who.split("\n", 1)[0]
        return first[len("Speaker: ") :] if first.startswith("Speaker: ") else None

    def content(self) -> str:
        """The episode's content again ("Speaker: text" for a message)."""
        first = self.who.split("\n", 1)[0]
        if first.startswith("Speaker: "):
            return f"{first[len('Speaker: ') :]}: {self.message}"
        return self.message


class ExtractedEntity(BaseModel):
    """One entity named or referred to in the current episode."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=200, description="The most specific name the text supports.")
    entity_type: str | None = Field(default=None, description="One of the declared types, else null.")
    attributes: dict[str, Any] = Field(default_factory=dict, description="Attributes of its type, if any.")


class ExtractedFact(BaseModel):
    """One fact between two entities of the episode."""

    model_config = ConfigDict(extra="ignore")

    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    relation: str = Field(min_length=1, description="A verb phrase ('works at') or SCREAMING_SNAKE_CASE.")
    fact: str = Field(min_length=1, description="The line's sentence; its time words date the fact.")
    attributes: dict[str, Any] = Field(default_factory=dict)


class EntityLine(ExtractedEntity):
    type: Literal["entity"] = "entity"


class FactLine(ExtractedFact):
    type: Literal["fact"] = "fact"


def entity_of(part: NamePart) -> EntityLine:
    return EntityLine(name=part.name, entity_type=part.entity_type, attributes=dict(part.attributes or {}))


def fact_of(parts: FactParts, speaker: str | None = None, message: str = "") -> FactLine:
    """The fact of a decoded line; its sentence the message's clause naming both ends when one does
    (:func:`~.said_clause.said_clause`), else the line's."""
    said = said_clause(message, speaker, parts.source.name, parts.target.name) if message else None
    return FactLine(
        source=parts.source.name,
        target=parts.target.name,
        relation=parts.relation,
        fact=said or parts.sentence,
        attributes=dict(parts.attributes),
    )


def decode_fact(
    line: str, data: Any, speaker: str | None = None, message: str | None = None
) -> list[EntityLine | FactLine]:
    """A fact line as the entities it names (each with its type, if written) and the fact; a bare
    ``[name]`` line as that entity alone. With ``data.sentences_from_message``, the fact's sentence is
    taken from the turn the line is about (``speaker`` and ``message``; by default ``data``'s, an
    :class:`ExtractionInput`)."""
    parts = read_line(line, data.type_names)
    if isinstance(parts, NamePart):
        return [entity_of(parts)]
    if not data.sentences_from_message:
        speaker, message = None, ""
    elif message is None and isinstance(data, ExtractionInput):
        speaker, message = data.speaker(), data.message
    return [entity_of(parts.source), entity_of(parts.target), fact_of(parts, speaker, message or "")]


__all__ = ["NONE", "EntityLine", "ExtractedEntity", "ExtractedFact", "ExtractionInput", "FactLine"]
