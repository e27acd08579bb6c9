"""What a gate of the names room or the facts room decided about one name or fact line.

Each rule of the algorithm's two rooms (``pipeline.names``, ``pipeline.facts``) is a named step, a
*gate*; one that refuses or changes what it is given returns a :class:`Verdict` saying so, the rooms
return them with their results, and the episode's run hands them to the queue with the write it wants
(``outcome.EpisodeOutcome.verdicts``): which rule refused a name, or left a fact undated, is visible to
the caller and not only in the episode's report (whose warnings say the same in words). Not stored.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """``gate`` (the step's name) refused ``subject`` (a name, or a fact's sentence) for ``why``; or, not
    ``refused``, changed it (into ``became``, when what changed is the subject itself: a name)."""

    gate: str
    subject: str
    why: str = ""
    refused: bool = True
    became: str = ""
