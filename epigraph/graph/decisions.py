"""Decision records: what each stage of an episode's run decided, stored with the episode in its own
write (``EpisodeWrite.decisions``), so a person can later ask why the graph holds what it holds
(``search.explain``).

One :class:`DecisionRecord` per episode, a list of :class:`Step`, each one decision in the order it was
taken:

- ``name`` steps: each name the model's reply proposed, and what became of it: ``refused`` (``by``: the
  gate of the names room, ``why``), ``repaired`` (``by``: the repair, ``became``: the name it got), or
  resolved: ``new`` (a new entity), ``exact`` / ``head`` / ``merged`` (into an existing one; ``merged``:
  by the resolve call, ``shown``: the candidates it was shown), ``distinct`` (shown candidates, kept new);
- ``fact`` steps: each fact line of the reply (``line``: its place among them, from 1): ``dropped``
  (``by``: the gate, ``why``), ``new`` or ``restated`` (said again: the stored fact it merged into), with
  what decided it (``by``: ``word_for_word``, ``restated``, ``no_candidates``, ``resolve_call``,
  ``unasked``), the candidates shown, and ``dated``: the words that dated it; ``overruled``: a check that
  took a retirement out of the resolve call's decision (``by``: the check);
- ``retire`` steps: each fact the episode retired (``ids``: the retired fact, then the fact that
  retired it; ``by``: what decided that fact).

Compact: names and sentences, never prompt text; ``texts`` holds the reply's lines verbatim only when
``RecordOptions.texts`` asks for them. ``VERSION`` is the record's own shape (stored inside it), apart
from the stores' schema versions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from .model import GroupId, UtcDatetime, Uuid, normalize_name

VERSION = 1

NAME, FACT, RETIRE = "name", "fact", "retire"
STAGES = (NAME, FACT, RETIRE)
REFUSED, REPAIRED, DROPPED, OVERRULED, RETIRED = "refused", "repaired", "dropped", "overruled", "retired"
NEW, RESTATED, MERGED, DISTINCT = "new", "restated", "merged", "distinct"
KEPT_BESIDE = ("group_id", "episode_uuid", "version")
"""The fields a store keeps in columns (properties) of their own, not in the record's JSON."""


class Step(BaseModel):
    """One decision of one stage (module docstring): ``act`` done to ``subject`` (a name, a fact's
    sentence) ``by`` a rule, ``why``; ``ids``: the entity or fact uuids it concerns (what it became
    first); ``shown``: the candidates it was compared with; ``line``: the fact line of the reply (from 1;
    0: not a fact line); ``became``: a repaired name; ``dated``: the words that dated a fact."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: str
    act: str
    subject: str
    by: str = ""
    why: str = ""
    ids: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    line: int = 0
    became: str = ""
    dated: str = ""


class DecisionRecord(BaseModel):
    """What the stages decided about one episode (``steps``, in order); ``texts``: the reply's lines
    verbatim, when asked for (``RecordOptions.texts``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    group_id: GroupId
    episode_uuid: Uuid
    created_at: UtcDatetime
    steps: tuple[Step, ...] = ()
    texts: tuple[str, ...] = ()
    version: int = Field(default=VERSION, ge=1)

    def to_json(self) -> str:
        """The record as stored: compact JSON, defaults left out, without what the store keeps beside it
        (``KEPT_BESIDE``: its group, episode and version)."""
        body = self.model_dump(mode="json", exclude_defaults=True, exclude=set(KEPT_BESIDE))
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, *, group_id: str, episode_uuid: str, version: int) -> DecisionRecord:
        """A stored record, with what the store keeps beside it."""
        known = {"group_id": group_id, "episode_uuid": episode_uuid, "version": version}
        return cls.model_validate({**json.loads(text), **known})

    def names(self) -> list[str]:
        """The normalized names its name steps decided about (as said, and as repaired), for a lookup
        by name (``DecisionReads.decisions_naming``)."""
        said = (n for s in self.steps if s.stage == NAME for n in (s.subject, s.became) if n)
        return sorted({normalize_name(n) for n in said} - {""})

    def about(self, uuids: Iterable[str]) -> list[Step]:
        """The steps concerning any of ``uuids`` (in their ``ids`` or ``shown``)."""
        wanted = set(uuids)
        return [s for s in self.steps if wanted & {*s.ids, *s.shown}]

    def naming(self, name: str) -> list[Step]:
        """The name steps about ``name`` (normalized alike), as said or as repaired."""
        norm = normalize_name(name)
        return [
            s
            for s in self.steps
            if s.stage == NAME and norm in {normalize_name(s.subject), normalize_name(s.became)}
        ]


def in_order(records: Iterable[DecisionRecord], episode_uuids: Sequence[str]) -> list[DecisionRecord]:
    """``records`` in the order of their episodes in ``episode_uuids``."""
    place = {uuid: i for i, uuid in reversed(list(enumerate(episode_uuids)))}
    return sorted(records, key=lambda r: place.get(r.episode_uuid, len(place)))


def stored_size(record: DecisionRecord) -> int:
    """Bytes the record takes as stored (its UTF-8 JSON): what ``stats`` counts."""
    return len(record.to_json().encode())
