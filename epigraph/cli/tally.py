"""The running totals of one ingestion (:class:`Tally`, fed with progress events) and its live progress
bar. No output of its own: :mod:`.outcome` prints the summary."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console
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

from ..episodes.events import EpisodeDone, EpisodeFailed, EpisodeResult, ProgressEvent
from ..graph.model import IngestReport
from ..overview import OverviewUpdated


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
