"""What the ``epigraph`` command prints: the ingestion tally, its live progress bar and summary, and the
tables of ``episodes``, ``stats``, ``entity`` and ``import --dry-run``. No I/O beyond the consoles it
is given; the command modules decide what to run and where output goes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ..errors import InputError
from ..graph.model import Episode, IngestReport
from ..graph.search import EntityView
from ..graph.search import render as R
from ..graph.store import StoreStats
from ..overview import OverviewUpdated
from ..pipeline.events import EpisodeDone, EpisodeFailed, EpisodeResult, ProgressEvent
from ..pipeline.importers import DryRun
from .failures import rejected_input

SHOWN_PROBLEMS = 20
"""At most this many invalid lines / failed episodes are listed one by one."""


# ------------------------------------------------------------------------------------------- output


@dataclass
class Output:
    """Where a command's output goes: tables and results on ``out``, notes and problems on ``err``."""

    out: Console
    err: Console
    as_json: bool

    def write(self, text: str, *, error: bool = False) -> None:
        """Plain text, no markup or wrapping (stdout, or stderr with ``error``)."""
        stream = self.err.file if error else self.out.file
        stream.write(text + "\n")
        stream.flush()

    def note(self, text: str) -> None:
        self.write(f"epigraph: {text}", error=True)

    def print_json(self, data: Any) -> None:
        self.write(json.dumps(data, indent=2, ensure_ascii=False, default=str))

    def reject(self, errors: Sequence[InputError], count: int, what: str) -> int:
        """Bad input without --skip-invalid: list the problems, ingest nothing; exit code 2 (with
        --json, the failure with every problem listed on stdout as well)."""
        for error in errors:
            self.note(str(error))
        more = f" (the first {len(errors)} shown)" if count > len(errors) else ""
        plural = "s" * (count != 1)
        message = f"{count} invalid {what}{plural}{more}; nothing ingested (fix them, or pass --skip-invalid)"
        failed = rejected_input(errors, count, message)
        return failed.report(as_json=self.as_json, stdout=self.out.file, stderr=self.err.file)

    def skipped(self, errors: Sequence[InputError], count: int, what: str) -> None:
        for error in errors:
            self.note(f"skipped: {error}")
        if count > len(errors):
            self.note(f"... and {count - len(errors)} more invalid {what}s skipped")

    def finish(self, tally: Tally, title: str, extra: Mapping[str, Any]) -> int:
        """The ingestion summary (table, or JSON); exit code 1 when an episode failed."""
        if self.as_json:
            self.print_json({**extra, **tally.to_dict()})
        else:
            self.out.print(summary_table(tally, title))
            for line in failures_text(tally):
                self.note(line)
        return 1 if tally.failed else 0


# ---------------------------------------------------------------------------------------- the tally


@dataclass(frozen=True, slots=True)
class Failure:
    uuid: str
    line: int | None
    error: str


@dataclass(slots=True)
class _Cost:
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    embedding_requests: int = 0


@dataclass
class Tally:
    """Running totals of one ingestion, fed with progress events batch by batch (memory stays flat: per
    episode state lives only for the current batch).

    An episode counts once, by its last result: the ingestor sends a second ``EpisodeDone`` for a group's
    last episode after the batched summary refresh, with the summary cost added to its report.
    """

    done: int = 0
    failed: int = 0
    skipped: int = 0
    """Already ingested earlier (idempotent re-run): nothing changed, nothing spent."""
    invalid: int = 0
    """Input lines/records skipped as invalid (``--skip-invalid``)."""
    entities: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    invalidated: set[str] = field(default_factory=set)
    failures: list[Failure] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    _cost: _Cost = field(default_factory=_Cost)
    _batch: dict[int, EpisodeResult] = field(default_factory=dict)
    _lines: Sequence[int | None] = ()

    def begin_batch(self, lines: Sequence[int | None]) -> None:
        """Start a batch; ``lines`` are the input lines of its episodes (by position)."""
        self.end_batch()
        self._lines = lines

    def event(self, event: ProgressEvent) -> bool:
        """Record one event; True when it finished an episode for the first time (advance the bar)."""
        if isinstance(event, OverviewUpdated):  # conversations and communities after the batch
            self._add_cost(event.report)
            return False
        if not isinstance(event, EpisodeDone | EpisodeFailed) or event.result is None:
            return False
        first = event.index not in self._batch
        self._batch[event.index] = event.result
        result = event.result
        self.entities.update(e.uuid for e in result.entities)
        self.facts.update(f.uuid for f in result.facts)
        self.invalidated.update(f.uuid for f in result.invalidated)
        return first

    def end_batch(self) -> None:
        """Fold the batch's final results into the totals."""
        for index, result in sorted(self._batch.items()):
            line = self._lines[index] if index < len(self._lines) else None
            self._count(result, line)
        self._batch, self._lines = {}, ()

    def add_results(self, results: Iterable[EpisodeResult]) -> None:
        """Count finished results directly (``retry``)."""
        for result in results:
            self.entities.update(e.uuid for e in result.entities)
            self.facts.update(f.uuid for f in result.facts)
            self.invalidated.update(f.uuid for f in result.invalidated)
            self._count(result, None)

    def _count(self, result: EpisodeResult, line: int | None) -> None:
        if result.skipped:
            self.skipped += 1
            return
        if result.ok:
            self.done += 1
        else:
            self.failed += 1
            self.failures.append(Failure(result.episode.uuid, line, result.error or "unknown error"))
        self._add_cost(result.report)

    def _add_cost(self, report: IngestReport) -> None:
        self._cost.llm_calls += report.llm_calls
        self._cost.input_tokens += report.input_tokens
        self._cost.output_tokens += report.output_tokens
        self._cost.embedding_requests += report.embedding_requests

    @property
    def cost(self) -> _Cost:
        return self._cost

    @property
    def finished(self) -> int:
        return self.done + self.failed + self.skipped + len(self._batch)

    def detail(self) -> str:
        """The live line next to the progress bar."""
        failed = self.failed + sum(1 for r in self._batch.values() if not r.ok)
        parts = [f"{len(self.entities)} entities", f"{len(self.facts)} facts"]
        parts.append(f"{len(self.invalidated)} retired")
        if failed:
            parts.append(f"[red]{failed} failed[/red]")
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": {
                "done": self.done,
                "failed": self.failed,
                "skipped": self.skipped,
                "invalid": self.invalid,
            },
            "entities": len(self.entities),
            "facts": len(self.facts),
            "invalidations": len(self.invalidated),
            **asdict(self._cost),
            "elapsed_s": round(time.monotonic() - self.started, 3),
            "failures": [asdict(f) for f in self.failures],
        }


# ------------------------------------------------------------------------------------- progress bar


class Bar:
    """A live rich progress bar over ingestion events (disabled when stderr is not a terminal)."""

    def __init__(self, progress: Progress, task: TaskID, tally: Tally) -> None:
        self.progress, self.task, self.tally = progress, task, tally

    def event(self, event: ProgressEvent) -> None:
        advance = 1 if self.tally.event(event) else 0
        self.progress.update(self.task, advance=advance, detail=self.tally.detail())


@contextmanager
def progress_bar(console: Console, total: int | None, tally: Tally, *, enabled: bool) -> Iterator[Bar]:
    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]episodes"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[detail]}"),
        console=console,
        disable=not enabled or not console.is_terminal,
    )
    with progress:
        task = progress.add_task("ingest", total=total, detail="")
        yield Bar(progress, task, tally)


# ------------------------------------------------------------------------------------------- tables


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


def episode_dict(episode: Episode) -> dict[str, Any]:
    return episode.model_dump(mode="json", exclude={"content_embedding"})


def episodes_table(episodes: Sequence[Episode], group_id: str) -> RenderableType:
    if not episodes:
        return Text(f"no episodes in group {group_id!r} match", style="dim")
    table = Table(title=f"Episodes in {group_id!r} ({len(episodes)})", title_justify="left")
    for col in ("when", "status", "name", "content", "uuid"):
        table.add_column(col, overflow="fold", no_wrap=col == "uuid")
    styles = {"failed": "red", "pending": "yellow"}
    for e in episodes:
        status = e.status.value + (f": {R.shorten(e.error, 60)}" if e.error else "")
        table.add_row(
            R.fmt_time(e.reference_time),
            status,
            e.name,
            R.shorten(e.content, 80),
            e.uuid,
            style=styles.get(e.status.value),
        )
    return table


def stats_table(stats: StoreStats, extra: Mapping[str, int | str], title: str) -> RenderableType:
    table = Table(show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for name, value in [*asdict(stats).items(), *extra.items()]:
        table.add_row(name.replace("_", " "), f"{value:,}" if isinstance(value, int) else str(value))
    return Group(Text(title, style="bold"), table)


def entity_renderable(view: EntityView) -> RenderableType:
    """The entity view's own tables, with the history table showing the retiring episode as well."""
    tables = [_history_table(view) if t.title.startswith("History") else t for t in view.tables()]
    e = view.entity
    head = e.name + (f" [{', '.join(e.labels)}]" if e.labels else "")
    head += f"  aka {', '.join(e.aliases)}" if e.aliases else ""
    parts: list[RenderableType] = [Text(head, style="bold")]
    if e.summary:
        parts.append(Text(e.summary))
    parts.append(Text(f"group {e.group_id!r} · uuid {e.uuid} · mentioned in {view.mentions} episodes", "dim"))
    return Group(*parts, R.rich_group(tables))


def _history_table(view: EntityView) -> R.Table:
    def name(uuid: str) -> str:
        if uuid == view.entity.uuid:
            return view.entity.name
        other = view.neighbours.get(uuid)
        return other.name if other else uuid[:8]

    rows = tuple(
        (
            name(r.fact.source_uuid),
            r.fact.relation,
            name(r.fact.target_uuid),
            R.shorten(r.fact.text, 70),
            R.fmt_validity(r.fact),
            R.fmt_time(r.retired_at),
            R.shorten(r.by_fact.text, 50) if r.by_fact else "",
            _episode_ref(r.by_episode),
        )
        for r in view.history
    )
    cols = ("source", "relation", "target", "fact", "valid", "retired", "by fact", "by episode")
    return R.Table("History (retired facts)", cols, rows, dim_rows=frozenset(range(len(rows))))


def _episode_ref(episode: Episode | None) -> str:
    if episode is None:
        return ""
    return f"{R.fmt_time(episode.reference_time)} {R.shorten(episode.content, 40)} ({episode.uuid[:8]})"


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
        "first": [episode_dict(e) for e in report.first],
    }
