"""A reply's lines as they stream, names repaired on the way to the rooms: the first step of the names
room (``pipeline/names/__init__.py``).

Every name of an extraction reply, an entity line's and each end of a fact line alike, passes three
repairs in this order, each a named step whose change is kept (:attr:`Reply.repairs`):

1. ``title``: a quoted title the message quotes too names the work ('"Finding Freedom" piece' ->
   "Finding Freedom": ``repair.titled``);
2. ``possessor``: a bare possessive of a name of the reply or the speaker is that name ("Caroline's"
   -> "Caroline": ``repair.possessor``);
3. ``owned``: what the speaker calls "my X" is the speaker's X, and "I" or "me" is the speaker
   (``speaker.owned``).

An entity line goes on to the resolver (``resolver``, where the gates of ``gates`` judge it) at once,
unless whether it is owned depends on names later in the reply (``speaker.undecided``: "my dance crew
took ..." for "dance"); those, and the fact lines, are settled when the reply has ended. The speaker of
a message is an entity of it, added with the first thing extracted.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...episodes.verdicts import Verdict
from ...graph.model import speaker_of
from ...prompts.extraction import ExtractedEntity, ExtractedFact
from ..state import EpisodeRun
from .repair import possessor, titled
from .resolver import EntityResolver
from .speaker import owned, undecided

TITLE, POSSESSOR, OWNED = "title", "possessor", "owned"
REPAIRS = (TITLE, POSSESSOR, OWNED)
"""The repairs' names, in the order they run."""


def _add_speaker(run: EpisodeRun, resolver: EntityResolver) -> None:
    """A message's speaker is an entity of it, known without asking the model: added with the first
    thing extracted (a greeting that states nothing adds no entity)."""
    speaker = speaker_of(run.episode)
    if speaker is not None and not resolver.names:
        resolver.add(ExtractedEntity(name=speaker))


class Reply:
    """One extraction reply's lines as they arrive (:meth:`take`), their names repaired (module
    docstring; each repair's verdict given to the resolver's ``verdicts``), entities handed on to
    ``resolver`` and fact lines kept for :meth:`settle`. A fact-only reply (extract_facts) holds no
    entity line: its names are the ``known`` ones (the entities it was asked about)."""

    def __init__(self, run: EpisodeRun, resolver: EntityResolver, known: Sequence[str] | None = None) -> None:
        self.run, self.resolver, self.facts_only = run, resolver, known is not None
        self.speaker, self.text = speaker_of(run.episode), run.episode.content
        self.names = list(known or ())
        self.held: list[ExtractedEntity] = []
        self.facts: list[ExtractedFact] = []

    def take(self, line: object) -> None:
        if isinstance(line, ExtractedFact):
            self.names += (line.source, line.target)
            self.facts.append(line)
        elif isinstance(line, ExtractedEntity):
            self.names.append(line.name)
            if undecided(line.name, self.text, self.speaker):
                self.held.append(line)
            else:
                self._add(line)

    def settle(self) -> list[ExtractedFact]:
        """The held entities added and the fact lines returned, all judged against the whole reply."""
        for entity in self.held:
            self._add(entity)
        ends = [{"source": self._own(f.source), "target": self._own(f.target)} for f in self.facts]
        return [fact.model_copy(update=update) for fact, update in zip(self.facts, ends, strict=True)]

    def _add(self, entity: ExtractedEntity) -> None:
        assert not self.facts_only, "an entity line in a fact-only reply"
        _add_speaker(self.run, self.resolver)
        self.resolver.add(entity.model_copy(update={"name": self._own(entity.name)}))

    def _own(self, name: str) -> str:
        """``name`` through the repairs, in their order (module docstring)."""
        speaker, text = self.speaker, self.text
        name = self._repaired(TITLE, name, titled(name, text))
        reply_names = [*([speaker] if speaker else []), *self.names]
        name = self._repaired(POSSESSOR, name, possessor(name, reply_names))
        return self._repaired(OWNED, name, owned(name, text, speaker, self.names))

    def _repaired(self, gate: str, name: str, repaired: str) -> str:
        if repaired != name:
            self.resolver.verdicts.append(Verdict(gate, name, refused=False, became=repaired))
        return repaired
