"""Fixtures for the LLM client tests."""

from __future__ import annotations

import pytest

from epigraph.tokens import load_encoding


@pytest.fixture(scope="session", autouse=True)
def _warm_tokenizer() -> None:
    """Load the BPE tables once, so timing assertions do not include the first load."""
    load_encoding()
