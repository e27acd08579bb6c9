"""Person names found by spaCy's English pipeline (``en_core_web_sm``, its files verified by
``pipeline.names.tagging``): its ``PERSON`` entities, for ``Redaction(names=True)``. A name's normal form is
its casefolded words, so "Dana" is one placeholder wherever she is named that way; a name found
inside a span of the rules (an email's local part) is the rules'."""

from __future__ import annotations

from ..pipeline.names.tagging import english_pipeline
from .detectors import Span
from .policy import PERSON


def person_names(text: str) -> list[Span]:
    document = english_pipeline()(text)
    return [
        Span(PERSON, ent.start_char, ent.end_char, " ".join(ent.text.casefold().split()))
        for ent in document.ents
        if ent.label_ == "PERSON" and any(c.isalpha() for c in ent.text)
    ]
