"""The placeholder a redacted value becomes: ``<PHONE_3>`` is the group's third phone number, the same
in every episode of the group, so facts about it still join; :func:`placeholders_in` reads them back.

Angle brackets, not square ones: a model's fact line names its two entities in square brackets
(``prompts.fact_lines``: ``[Dana] HAS_PHONE [<PHONE_3>]``), which a name cannot contain, so a
``[PHONE_3]`` would lose its brackets in every entity and fact written about it (``PHONE_3``) and no
longer be read back there."""

from __future__ import annotations

import re

LABELS = {
    "email": "EMAIL",
    "phone": "PHONE",
    "card": "CARD",
    "iban": "IBAN",
    "ip": "IP",
    "key": "KEY",
    "person": "PERSON",
}
WHAT = {
    "email": "an email address",
    "phone": "a phone number",
    "card": "a payment card number",
    "iban": "an IBAN",
    "ip": "an IP address",
    "key": "an API key",
    "person": "a person's name",
}
"""Each kind in words, for messages."""
KIND_OF = {label: kind for kind, label in LABELS.items()}
PLACEHOLDER = re.compile(r"<(" + "|".join(LABELS.values()) + r")_([1-9]\d*)>")


def placeholder(kind: str, number: int) -> str:
    return f"<{LABELS[kind]}_{number}>"


def unnumbered(kind: str) -> str:
    """What a value no vault holds becomes in a query (``<PHONE>``): a phone number the memory does not
    know, never a placeholder (:data:`PLACEHOLDER` wants a number), so it finds nothing and says nothing."""
    return f"<{LABELS[kind]}>"


def placeholders_in(text: str) -> list[tuple[str, int]]:
    """Every ``(kind, number)`` placeholder of ``text``, in order, each once."""
    found = ((KIND_OF[m.group(1)], int(m.group(2))) for m in PLACEHOLDER.finditer(text))
    return list(dict.fromkeys(found))
