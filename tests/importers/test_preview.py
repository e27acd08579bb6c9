"""What --show-mapping and --dry-run print."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from epigraph.importers import (
    dry_run,
    plan_without_llm,
    render_dry_run,
    render_episodes,
    render_plan,
)

FIXTURES = Path(__file__).parent / "fixtures"
T0 = datetime(2020, 1, 1, tzinfo=UTC)


def test_render_plan_shows_the_explicit_mapping() -> None:
    plan = plan_without_llm(FIXTURES / "locomo_mini.json", group_id="g")
    text = render_plan(plan)
    assert "messages mode, detected: locomo; group 'g'" in text
    mapping = json.loads(text.split("\n", 1)[1])
    assert mapping["records"] == "session_{n}[*]"
    assert mapping["meta"]["source"] == {"value": "locomo:locomo_mini"}


def test_dry_run_counts_everything_and_shows_the_first() -> None:
    plan = plan_without_llm(FIXTURES / "locomo_mini.json", group_id="g")
    report = dry_run(plan, show=2)
    assert report.total == 5 and len(report.first) == 2
    assert report.names == {"Ana": 3, "Ben": 2}
    assert report.earliest == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    text = render_dry_run(report)
    assert text.startswith("5 message episodes from 1 record of ")
    assert "speakers: Ana 3, Ben 2" in text
    assert "2023-05-08T13:56:00+00:00 .. 2023-06-27T10:37:00+00:00" in text
    assert "Ana: Hi Ben! I started a pottery class yesterday." in text


def test_dry_run_limit_and_problems() -> None:
    plan = plan_without_llm(FIXTURES / "broken.jsonl", group_id="g", default_time=T0)
    report = dry_run(plan, limit=1)
    assert report.total == 1
    text = render_dry_run(dry_run(plan))
    assert "2 invalid records (imported only with --skip-invalid)" in text
    assert "broken.jsonl:3: the message content reaches nothing (field 'text')" in text


def test_dry_run_reports_skipped_messages() -> None:
    text = render_dry_run(dry_run(plan_without_llm(FIXTURES / "openai.jsonl", default_time=T0)))
    assert "skipped: 1 empty messages, 1 system messages, 1 tool messages" in text


def test_render_episodes_shortens_long_content() -> None:
    plan = plan_without_llm(FIXTURES / "docs", default_time=T0)
    report = dry_run(plan)
    assert "1. " in render_episodes(report.first, width=10)
    assert "…" in render_episodes(report.first, width=10)
