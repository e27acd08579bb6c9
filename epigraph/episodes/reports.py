"""Pure arithmetic on ingest reports."""

from __future__ import annotations

from ..graph.model import IngestReport, PromptUsage


def merge_reports(first: IngestReport, later: IngestReport) -> IngestReport:
    """``first`` followed by ``later`` (e.g. an episode and the batch summary refresh charged to it)."""
    per_prompt = dict(first.per_prompt)
    for name, usage in later.per_prompt.items():
        old = per_prompt.get(name, PromptUsage())
        per_prompt[name] = PromptUsage(
            calls=old.calls + usage.calls,
            input_tokens=old.input_tokens + usage.input_tokens,
            output_tokens=old.output_tokens + usage.output_tokens,
        )
    stage_ms = dict(first.stage_ms)
    for stage, ms in later.stage_ms.items():
        stage_ms[stage] = round(stage_ms.get(stage, 0.0) + ms, 3)
    return IngestReport(
        llm_calls=first.llm_calls + later.llm_calls,
        input_tokens=first.input_tokens + later.input_tokens,
        output_tokens=first.output_tokens + later.output_tokens,
        per_prompt=per_prompt,
        embedding_requests=first.embedding_requests + later.embedding_requests,
        embedded_texts=first.embedded_texts + later.embedded_texts,
        round_trips=first.round_trips + later.round_trips,
        stage_ms=stage_ms,
        dropped_lines=first.dropped_lines + later.dropped_lines,
        names_refused=first.names_refused + later.names_refused,
        truncated=first.truncated or later.truncated,
        warnings=[*first.warnings, *(w for w in later.warnings if w not in first.warnings)],
    )
