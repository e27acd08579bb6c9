"""Fixtures of the interactive view's tests: the demo graph's view (the quickstart conversation replayed
offline) and one headless Chromium for the package (Debian's ``chromium`` under Playwright; ``make test``
installs it). Without ``chromium`` the browser tests skip, except in CI, where they fail."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from docs.screenshots import SIZE, browser, demo_view
from epigraph.explore import GraphView
from tests.support.view_page import in_thread


@pytest.fixture(scope="session")
def alice() -> GraphView:
    """Alice's neighbourhood in the demo graph (retired facts drawn too)."""
    return in_thread(demo_view("Alice"))


@pytest.fixture(scope="package")
def chrome() -> Iterator[Any]:
    """One browser for the browser tests, all of which are in this package: Playwright's sync API keeps
    an event loop running on this thread while it is open, which async tests elsewhere cannot share."""
    if shutil.which("chromium") is None:
        message = "Debian's chromium is not installed (`make chromium`)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with browser() as launched:
        yield launched


@pytest.fixture
def page(chrome: Any) -> Iterator[Any]:
    """A fresh page; any script error on it fails the test."""
    context = chrome.new_context(viewport=SIZE)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert not errors, f"script errors on the page: {errors}"
