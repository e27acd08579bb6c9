"""The queue's reports: a batch's extra calls (its summaries) added to an episode's report."""

from __future__ import annotations

from epigraph.episodes.reports import merge_reports
from epigraph.graph.model import IngestReport, PromptUsage


def test_merge_reports_adds_everything() -> None:
    def usage(calls: int, tokens_in: int, tokens_out: int) -> dict[str, PromptUsage]:
        return {"x": PromptUsage(calls=calls, input_tokens=tokens_in, output_tokens=tokens_out)}

    a = IngestReport(
        llm_calls=2, input_tokens=10, output_tokens=3, per_prompt=usage(2, 10, 3),
        round_trips=2, stage_ms={"s": 1.0}, warnings=["w"],
    )  # fmt: skip
    b = IngestReport(
        llm_calls=1, input_tokens=5, output_tokens=1, per_prompt=usage(1, 5, 1),
        round_trips=1, stage_ms={"s": 2.0}, warnings=["w", "v"], truncated=True,
    )  # fmt: skip
    merged = merge_reports(a, b)
    assert (merged.llm_calls, merged.input_tokens, merged.output_tokens, merged.round_trips) == (3, 15, 4, 3)
    assert merged.per_prompt["x"] == PromptUsage(calls=3, input_tokens=15, output_tokens=4)
    assert merged.stage_ms == {"s": 3.0} and merged.warnings == ["w", "v"] and merged.truncated
