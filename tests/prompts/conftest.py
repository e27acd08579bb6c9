"""Fixtures: the test-only prompts of tests/support/prompt_defs.py."""

from __future__ import annotations

import pytest

from epigraph.prompts import Prompt
from tests.support.prompt_defs import Decision, EntityOut, MixedLine, make_prompt


@pytest.fixture
def entities_prompt() -> Prompt:
    return make_prompt("test_entities", "jsonl", EntityOut)


@pytest.fixture
def mixed_prompt() -> Prompt:
    return make_prompt("test_mixed", "jsonl", MixedLine)


@pytest.fixture
def decide_prompt() -> Prompt:
    return make_prompt("test_decide", "json", Decision, small=True, max_tokens=300)


@pytest.fixture
def summary_prompt() -> Prompt:
    return make_prompt("test_summary", "text", None)
