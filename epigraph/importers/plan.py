"""Plan an import (choose and validate the mapping) and stream its episodes.

``plan_import`` picks the mapping: a file given by the caller, else a known shape (no LLM), else a
mapping the LLM proposes from a few sample records. Whatever its origin, the mapping is validated on
the samples before use. ``iter_inputs`` then streams the file through it as ``EpisodeInput`` items for
``Ingestor.ingest`` (``iter_episodes``: as the ``Episode`` objects that will be stored): memory stays
flat, the first episodes arrive at once, and ``limit`` stops reading early.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import InputError, UsageError
from epigraph.graph.model import Episode, check_group_id
from epigraph.prompts.protocol import LLM

from .compiled import CompiledMapping
from .convert import Converter, ConvertStats, to_episode
from .detect import detect
from .mapping import Mapping, load_mapping, save_mapping
from .readers import Format, InvalidRecord, RawRecord, read_records, sample_records, sniff_format
from .validate import MappingError, compile_mapping

SAMPLE_SIZE = 5
MappingChoice = Literal["auto"] | str | Path | Mapping


@dataclass(frozen=True)
class ImportPlan:
    """Everything needed to turn a file into episodes; cheap to build, nothing read beyond the samples."""

    path: Path
    format: Format
    mapping: Mapping
    """The validated mapping with every choice explicit: show it, save it, reuse it."""
    compiled: CompiledMapping
    origin: str
    """Where the mapping came from: ``detected: locomo``, ``file: m.json``, ``proposed by the LLM``."""
    group_id: str
    source: str
    """The default ``source_description`` (the file's name) when the mapping has no ``meta.source``."""
    default_time: datetime
    """reference_time of records without a timestamp: the file's modification time."""
    samples: list[Any] = field(default_factory=list, repr=False)

    @property
    def mode(self) -> str:
        return self.compiled.mode

    def save_mapping(self, path: str | Path) -> Path:
        return save_mapping(self.mapping, path)


def plan_without_llm(
    path: str | Path,
    mapping: MappingChoice = "auto",
    *,
    group_id: str = "default",
    sample_size: int = SAMPLE_SIZE,
    default_time: datetime | None = None,
) -> ImportPlan:
    """Plan with a given mapping or a detected known shape; raise :class:`MappingError` when the shape is
    unknown (then use :func:`plan_import` with an LLM, or write a mapping)."""
    p, fmt, samples = _open(path, sample_size, group_id)
    if mapping != "auto":
        chosen, origin = _given(mapping)
        return _plan(p, fmt, samples, chosen, origin, group_id, default_time)
    found = detect(samples, fmt, p.name)
    if found is None:
        raise MappingError(
            [
                f"no known format recognised ({_shape(samples)}); pass an LLM to propose a mapping, or "
                "write one (--mapping PATH; see epigraph.importers.mapping)"
            ],
            file=str(p),
        )
    return _plan(p, fmt, samples, found.mapping, f"detected: {found.name}", group_id, default_time)


async def plan_import(
    path: str | Path,
    mapping: MappingChoice = "auto",
    *,
    llm: LLM | None = None,
    group_id: str = "default",
    sample_size: int = SAMPLE_SIZE,
    default_time: datetime | None = None,
) -> ImportPlan:
    """Plan an import. ``mapping="auto"`` detects a known shape, else asks ``llm`` to propose a mapping
    (validated, re-asked once with the problems, then a clear :class:`MappingError`). A mapping file
    path or a :class:`Mapping` is validated and used as-is."""
    try:
        return plan_without_llm(
            path, mapping, group_id=group_id, sample_size=sample_size, default_time=default_time
        )
    except MappingError as exc:
        if mapping != "auto" or llm is None:
            raise
        detected_problem = exc
    from .propose import propose_mapping  # the LLM path only

    p, fmt, samples = _open(path, sample_size, group_id)
    try:
        proposed = await propose_mapping(llm, samples, file_name=p.name)
    except MappingError as exc:
        raise MappingError(
            [*exc.errors, f"(before asking the LLM: {detected_problem.errors[0]})"],
            exc.unresolved,
            file=str(p),
        ) from None
    return _plan(p, fmt, samples, proposed, "proposed by the LLM", group_id, default_time)


def _open(path: str | Path, sample_size: int, group_id: str) -> tuple[Path, Format, list[Any]]:
    try:
        check_group_id(group_id)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    p = Path(path)
    if not p.exists():
        raise InputError("no such file or folder", file=str(p))
    fmt = sniff_format(p)
    return p, fmt, sample_records(p, sample_size, fmt)


def _given(mapping: str | Path | Mapping) -> tuple[Mapping, str]:
    if isinstance(mapping, str | Path):
        return load_mapping(mapping), f"file: {mapping}"
    return mapping, "given"


def _plan(
    p: Path,
    fmt: Format,
    samples: list[Any],
    mapping: Mapping,
    origin: str,
    group_id: str,
    default_time: datetime | None,
) -> ImportPlan:
    checked = compile_mapping(mapping, samples, file=str(p))
    when = default_time or datetime.fromtimestamp(p.stat().st_mtime, UTC)
    return ImportPlan(p, fmt, checked.mapping, checked.compiled, origin, group_id, p.name, when, samples)


def _shape(samples: Sequence[Any]) -> str:
    if not samples:
        return "the file holds no records"
    first = samples[0]
    if isinstance(first, dict):
        return "records are objects with keys " + ", ".join(list(map(str, first))[:8])
    return f"records are {type(first).__name__} values"


# ------------------------------------------------------------------------------------------- running


def converter(plan: ImportPlan) -> Converter:
    return Converter(plan.compiled, plan.group_id, plan.source, plan.default_time)


def iter_inputs(
    plan: ImportPlan,
    limit: int | None = None,
    skip_invalid: bool = False,
    *,
    stats: ConvertStats | None = None,
) -> Iterator[EpisodeInput | InvalidRecord]:
    """Stream the plan's episodes as ``EpisodeInput`` (what ``Ingestor.ingest`` takes) in file order,
    at most ``limit`` of them.

    An invalid record (unreadable line, required path reaching nothing, bad date) raises its
    :class:`InputError` (file, line, path) unless ``skip_invalid``: then it is yielded as an
    :class:`InvalidRecord` for the caller to report, and reading goes on. Pass ``stats`` to collect
    counts (records, episodes, invalid, empty messages, messages skipped by role).
    """
    if limit is not None and limit <= 0:
        return
    conv = converter(plan)
    if stats is not None:
        conv.stats = stats
    produced = 0
    for raw in read_records(plan.path, plan.format):
        items = conv.convert(raw) if isinstance(raw, RawRecord) else iter((_count_invalid(conv, raw),))
        for item in items:
            if isinstance(item, InvalidRecord):
                if not skip_invalid:
                    raise item.error()
                yield item
                continue
            yield item
            produced += 1
            if limit is not None and produced >= limit:
                return


def iter_episodes(
    plan: ImportPlan,
    limit: int | None = None,
    skip_invalid: bool = False,
    *,
    stats: ConvertStats | None = None,
) -> Iterator[Episode | InvalidRecord]:
    """Like :func:`iter_inputs`, as the ``Episode`` objects the ingestor will store (same uuids)."""
    for item in iter_inputs(plan, limit, skip_invalid, stats=stats):
        yield item if isinstance(item, InvalidRecord) else to_episode(item)


def _count_invalid(conv: Converter, bad: InvalidRecord) -> InvalidRecord:
    conv.stats.invalid += 1
    return bad
