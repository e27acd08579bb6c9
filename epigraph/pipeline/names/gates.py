"""The gates an extracted name passes before it is resolved against the graph, in this order, each a
named step (its name is the :class:`~epigraph.pipeline.verdicts.Verdict`'s ``gate``):

1. ``not_an_entity``: the model's own type says the line names no entity (``NameOptions.grounding``'s
   ``not_entity_types``: a part of speech, a feeling: "Good" typed Adjective) -> refused;
2. ``grounded``: the name's words are nowhere in the episode, its speaker or the window extraction was
   shown (``grounding``; ``NameOptions.grounding`` None: no check) -> refused, a hallucination;
3. ``thing``: neither the speaker nor a noun phrase of its message (``NameOptions.things``, off by
   default: ``things``) -> refused;
4. ``unowned`` (``NameOptions.bare_names``): a speaker's possessive the message does not give loses its
   owner ("Gina's business" for "your own business"), unless that makes it another name of the reply
   -> renamed (``bare``);
5. ``kin`` (``NameOptions.bare_names``): "the kids" a speaker says are the speaker's -> renamed.

A name refused by the first two is counted a dropped line of the reply, by the third a refused name
(``IngestReport.names_refused``); each refusal is said in a warning (:func:`report_refusal`). What came
before (a name repaired as its line arrived: ``reply``) and after (resolution against the graph:
``resolver``) is the room's; see ``pipeline/names/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...episodes.verdicts import Verdict
from ...graph.model import Episode, speaker_of
from ..metering import ReportBuilder
from ..options import NameOptions
from .bare import kin_owned, unowned
from .grounding import Grounding, hallucinated, not_an_entity

NOT_AN_ENTITY, GROUNDED, THING, UNOWNED, KIN = "not_an_entity", "grounded", "thing", "unowned", "kin"
GATES = (NOT_AN_ENTITY, GROUNDED, THING, UNOWNED, KIN)
"""The gates' names, in the order they run."""
DROPPED_LINES = frozenset({NOT_AN_ENTITY, GROUNDED})
"""The refusals counted as dropped lines of the model's reply (the others: ``names_refused``)."""


@dataclass(frozen=True)
class NameDecision:
    """What the gates made of one extracted name: the name its entity gets (``surface`` as it was, when
    refused), and the verdict of each gate that refused or renamed it, in order."""

    surface: str
    name: str
    verdicts: tuple[Verdict, ...] = ()

    @property
    def refusal(self) -> Verdict | None:
        return next((v for v in self.verdicts if v.refused), None)


@dataclass(frozen=True)
class NameGates:
    """The gates of one episode's names (module docstring): its text and speaker, the names room's
    options and what names must be grounded in (None: the check is off)."""

    episode: Episode
    options: NameOptions
    grounding: Grounding | None

    def admit(self, surface: str, entity_type: str | None, taken: Callable[[str], bool]) -> NameDecision:
        """Run ``surface`` (a name as extracted, typed ``entity_type``) through the gates in order; a
        refusal ends it. ``taken(name)``: whether another name of the reply already gets ``name``
        (``unowned`` then keeps the owner rather than make two names one)."""
        for gate in (self._not_an_entity, self._grounded, self._thing):
            refused = gate(surface, entity_type)
            if refused is not None:
                return NameDecision(surface, surface, (refused,))
        if not self.options.bare_names:
            return NameDecision(surface, surface)
        text, speaker = self.episode.content, speaker_of(self.episode)
        name, verdicts = surface, []
        bare = unowned(surface, text, speaker)
        if bare != surface and not taken(bare):
            name = bare
            verdicts.append(Verdict(UNOWNED, surface, "the message gives no owner", False, bare))
        kin = kin_owned(name, text, speaker)
        if kin != name:
            verdicts.append(Verdict(KIN, name, "the speaker's relative", False, kin))
        return NameDecision(surface, kin, tuple(verdicts))

    def _not_an_entity(self, surface: str, entity_type: str | None) -> Verdict | None:
        policy = self.options.grounding
        if policy is None or not not_an_entity(entity_type, policy.not_entity_types):
            return None
        return Verdict(NOT_AN_ENTITY, surface, f"{surface!r} typed {entity_type!r}")

    def _grounded(self, surface: str, _: str | None) -> Verdict | None:
        if self.grounding is None or self.grounding.grounded(surface):
            return None
        return Verdict(GROUNDED, surface, hallucinated(surface))

    def _thing(self, surface: str, _: str | None) -> Verdict | None:
        things = self.options.things
        episode = self.episode
        why = things.refusal(surface, episode.content, speaker_of(episode)) if things is not None else None
        return Verdict(THING, surface, why) if why else None


def report_refusal(report: ReportBuilder, refusal: Verdict) -> None:
    """A refused name in the episode's report: counted (``DROPPED_LINES``, else ``names_refused``) and
    warned of."""
    if refusal.gate in DROPPED_LINES:
        report.dropped_lines += 1
    else:
        report.names_refused += 1
    report.warn(f"entity dropped: {refusal.why}")
