"""A server a test needs and does not have: skipped on a developer's machine, a failure in CI
(``CI=true``/``1``), where a suite must never pass by silently skipping a backend."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def skip_or_fail(reason: str, needed: str) -> NoReturn:
    """Skip with ``reason``; in CI fail, saying that CI must run ``needed``."""
    if in_ci():
        pytest.fail(f"{reason} (CI must run {needed}, not skip it)")
    pytest.skip(reason)
