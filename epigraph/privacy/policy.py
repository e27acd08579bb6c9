"""What the redaction policy replaces: ``IngestOptions.redact`` is ``False`` (off, the default), ``True``
(:data:`DEFAULT`: every kind the rules find) or a :class:`Redaction` naming the kinds, and whether
person names are replaced too (spaCy's tagger, ``epigraph[local-model]``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ConfigError
from .detectors import KINDS

PERSON = "person"


@dataclass(frozen=True)
class Redaction:
    """The kinds replaced (``detectors.KINDS``: key, email, iban, card, ip, phone) and, with
    ``names``, person names found by spaCy's English tagger (``privacy.names``; off by default: a
    memory of people's conversations is mostly about named people, so it is the caller's choice)."""

    kinds: frozenset[str] = field(default_factory=lambda: frozenset(KINDS))
    names: bool = False

    def __post_init__(self) -> None:
        unknown = sorted(set(self.kinds) - set(KINDS))
        if unknown:
            raise ConfigError(f"redact: unknown kind {unknown[0]!r} (known: {', '.join(KINDS)})")
        object.__setattr__(self, "kinds", frozenset(self.kinds))


DEFAULT = Redaction()


def redaction_of(redact: bool | Redaction) -> Redaction | None:
    """The policy ``IngestOptions.redact`` asks for, or None when it is off."""
    if isinstance(redact, Redaction):
        return redact
    return DEFAULT if redact else None
