"""What ``epigraph import --show-mapping`` and ``--dry-run`` print. Plain text; no I/O beyond reading the
dataset through :func:`iter_episodes`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from epigraph.graph.model import Episode

from .convert import ConvertStats
from .mapping import mapping_json
from .plan import ImportPlan, iter_episodes
from .readers import InvalidRecord

_SHOWN_INVALID = 20


@dataclass
class DryRun:
    """A full pass over the file without ingesting: counts, the first episodes, the first problems."""

    plan: ImportPlan
    first: list[Episode] = field(default_factory=list)
    total: int = 0
    names: Counter[str] = field(default_factory=Counter)
    earliest: datetime | None = None
    latest: datetime | None = None
    invalid: list[InvalidRecord] = field(default_factory=list)
    stats: ConvertStats = field(default_factory=ConvertStats)

    def add(self, episode: Episode, show: int) -> None:
        self.total += 1
        if len(self.first) < show:
            self.first.append(episode)
        if episode.kind == "message":
            self.names[episode.name] += 1
        t = episode.reference_time
        self.earliest = t if self.earliest is None or t < self.earliest else self.earliest
        self.latest = t if self.latest is None or t > self.latest else self.latest


def dry_run(
    plan: ImportPlan, *, show: int = 5, limit: int | None = None, skip_invalid: bool = True
) -> DryRun:
    """Convert the whole file (or ``limit`` episodes) without ingesting. Invalid records are collected
    (``skip_invalid=True``, the default: a dry run reports them all) or raised."""
    report = DryRun(plan)
    for item in iter_episodes(plan, limit, skip_invalid, stats=report.stats):
        if isinstance(item, InvalidRecord):
            if len(report.invalid) < _SHOWN_INVALID:
                report.invalid.append(item)
        else:
            report.add(item, show)
    return report


def render_plan(plan: ImportPlan) -> str:
    """The mapping and where it came from (``--show-mapping``)."""
    head = f"mapping for {plan.path} ({plan.mode} mode, {plan.origin}; group {plan.group_id!r}):"
    return f"{head}\n{mapping_json(plan.mapping)}"


def render_episodes(episodes: Iterable[Episode], width: int = 100) -> str:
    lines = []
    for i, ep in enumerate(episodes, 1):
        when = ep.reference_time.strftime("%Y-%m-%d %H:%M")
        text = " ".join(ep.content.split())
        text = text if len(text) <= width else text[: width - 1] + "…"
        lines.append(
            f"  {i:>3}. {when}  [{ep.kind}] {ep.name!s:.30}  ({ep.source_description}, {ep.uuid[:8]})"
        )
        lines.append(f"       {text}")
    return "\n".join(lines)


def render_dry_run(report: DryRun) -> str:
    """A readable summary of a dry run: totals, speakers, time span, first episodes, problems."""
    s = report.stats
    kind = "message" if report.plan.mode == "messages" else "text"
    out = [
        f"{_count(report.total, kind + ' episode')} from {_count(s.records, 'record')} of {report.plan.path} "
        f"(group {report.plan.group_id!r}, {report.plan.origin})",
    ]
    if report.names:
        top = ", ".join(f"{name} {n}" for name, n in report.names.most_common(8))
        more = f" and {len(report.names) - 8} more" if len(report.names) > 8 else ""
        out.append(f"speakers: {top}{more}")
    if report.earliest is not None and report.latest is not None:
        out.append(f"reference times: {report.earliest.isoformat()} .. {report.latest.isoformat()}")
    skipped = [f"{s.empty_messages} empty messages"] if s.empty_messages else []
    skipped += [f"{n} {role} messages" for role, n in sorted(s.skipped_roles.items())]
    if skipped:
        out.append("skipped: " + ", ".join(skipped))
    if report.first:
        out.append(f"first {len(report.first)}:")
        out.append(render_episodes(report.first))
    if s.invalid:
        out.append(f"{s.invalid} invalid records (imported only with --skip-invalid):")
        out.extend(f"  - {bad}" for bad in report.invalid)
        if s.invalid > len(report.invalid):
            out.append(f"  … and {s.invalid - len(report.invalid)} more")
    return "\n".join(out)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
