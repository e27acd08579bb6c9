"""The command line's own tables: the ingestion summary, the failed episodes, and ``import --dry-run``'s
JSON. Listings (episodes, stats, an entity, search results) are :mod:`epigraph.present`'s, the same in a
notebook."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..importers import DryRun
from ..present.records import episode_dict
from .tally import Tally

SHOWN_PROBLEMS = 20
"""At most this many failed episodes are listed one by one."""


def summary_table(tally: Tally, title: str) -> RenderableType:
    cost = tally.cost
    rows: list[tuple[str, int | str]] = [
        ("episodes done", tally.done),
        ("episodes failed", tally.failed),
    ]
    if tally.skipped:
        rows.append(("episodes already ingested (skipped)", tally.skipped))
    if tally.invalid:
        rows.append(("invalid input skipped", tally.invalid))
    rows += [
        ("entities (created or updated)", len(tally.entities)),
        ("facts (created or restated)", len(tally.facts)),
        ("invalidations (facts retired)", len(tally.invalidated)),
        ("LLM calls", cost.llm_calls),
        ("tokens in", cost.input_tokens),
        ("tokens out", cost.output_tokens),
        ("embedding requests", cost.embedding_requests),
        ("elapsed", f"{time.monotonic() - tally.started:.1f} s"),
    ]
    table = Table(show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for name, value in rows:
        table.add_row(name, f"{value:,}" if isinstance(value, int) else value)
    return Group(Text(title, style="bold"), table)


def failures_text(tally: Tally) -> list[str]:
    out = []
    for f in tally.failures[:SHOWN_PROBLEMS]:
        where = f"line {f.line}, " if f.line is not None else ""
        out.append(f"failed: {where}episode {f.uuid}: {f.error}")
    if len(tally.failures) > SHOWN_PROBLEMS:
        out.append(f"... and {len(tally.failures) - SHOWN_PROBLEMS} more failed episodes")
    if tally.failures:
        out.append("run `epigraph retry` to run the failed episodes again")
    return out


def dry_run_dict(report: DryRun) -> dict[str, Any]:
    plan = report.plan
    return {
        "file": str(plan.path),
        "group_id": plan.group_id,
        "mapping_origin": plan.origin,
        "mode": plan.mode,
        "records": report.stats.records,
        "episodes": report.total,
        "speakers": dict(report.names.most_common()),
        "earliest": report.earliest.isoformat() if report.earliest else None,
        "latest": report.latest.isoformat() if report.latest else None,
        "invalid": report.stats.invalid,
        "invalid_records": [str(bad) for bad in report.invalid],
        "first": [episode_dict(e, report=True) for e in report.first],
    }
