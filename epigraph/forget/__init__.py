"""Forgetting: a subject (an entity, its facts, its names in what stays) or a group's old episodes
(retention), previewed, applied in one transaction of the store, and what a model wrote rebuilt.

- :mod:`.subject`: whom a name or id denotes (an ambiguous name refused, with the candidates' ids);
- :mod:`.forgetter`: :class:`Forgetter`, preview, apply, rebuild (:class:`ForgetResult`: the result);
- :mod:`.retention`: which episodes a group's retention policy forgets now.

The plan itself is pure and shared by both stores: ``graph.forget_plan`` (the rules), ``graph.scrub``
(names out of text), ``graph.forgetting`` (the request, the write, the audit record).
"""

from .forgetter import ForgetOptions, ForgetResult, Forgetter, Rebuilt
from .retention import cutoff, due
from .subject import Subject, find_subject

__all__ = [
    "ForgetOptions",
    "ForgetResult",
    "Forgetter",
    "Rebuilt",
    "Subject",
    "cutoff",
    "due",
    "find_subject",
]
