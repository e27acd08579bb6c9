"""The listings ``epigraph episodes`` / ``stats`` print and a notebook shows (epigraph.present.listing)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from rich.console import Console

from epigraph.graph.model import Episode, EpisodeStatus, IngestReport
from epigraph.graph.store import StoreStats
from epigraph.present import EpisodeList, StatsView


def episode(text: str, status: EpisodeStatus, error: str | None = None) -> Episode:
    return Episode(
        group_id="g", content=text, reference_time=datetime(2023, 5, 8, tzinfo=UTC), status=status,
        error=error, report=IngestReport(llm_calls=3), content_embedding=[0.5, 0.5],
    )  # fmt: skip


def test_one_listing_marks_failed_and_pending_episodes_in_both_forms() -> None:
    listing = EpisodeList(
        "g",
        [
            episode("Alice: hi", EpisodeStatus.DONE),
            episode("Bob: hello", EpisodeStatus.FAILED, "the language model failed: LLMUnavailable"),
            episode("Carol: hey", EpisodeStatus.PENDING),
        ],
        until=datetime(2024, 1, 1, tzinfo=UTC),
    )
    table = listing.table()
    assert table.title == "Episodes in 'g' until 2024-01-01 (3)"
    assert [table.mark(i) for i in range(3)] == [None, "failed", "pending"]
    assert table.rows[1][1] == "failed: the language model failed: LLMUnavailable"
    html = listing._repr_html_()
    assert '<tr class="failed">' in html and '<tr class="pending">' in html
    console = Console(record=True, width=200)
    console.print(listing)
    assert "Carol: hey" in console.export_text()
    [first, *_] = json.loads(listing.to_json())["episodes"]
    assert first["report"]["llm_calls"] == 3 and "content_embedding" not in first
    console.print(EpisodeList("g", []))
    assert "Episodes in 'g' (0): no episodes match" in console.export_text()


def test_stats_show_extra_counts_and_where_the_store_is() -> None:
    view = StatsView(StoreStats(episodes=3, entities=4, facts=5, current_facts=4, mentions=9), "g",
                     {"failed_episodes": 1}, where="x.db")  # fmt: skip
    table = view.table()
    assert table.title == "group 'g' in x.db"
    assert ("retired facts", "1") in table.rows and ("failed episodes", "1") in table.rows
    data = view.to_dict()
    assert data == json.loads(view.to_json())
    assert (data["group_id"], data["mentions"], data["failed_episodes"]) == ("g", 9, 1)
