"""Commands that build the graph: ``ingest`` (JSONL episodes), ``import`` (a raw dataset through a field
mapping), ``retry`` (failed and pending episodes) and ``remove`` (an episode; the facts it retired come
back). Bad input ingests nothing unless told to skip it; an episode id that a stored episode, or an
earlier line, holds with other content is bad input too (``ingestion.conflicts``), found before anything
is ingested.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import get_args

from ..client import KnowledgeGraph
from ..episodes.events import EpisodeWaiting, ProgressEvent
from ..episodes.inputs import EpisodeInput
from ..errors import InputError
from ..graph.model import utc_now
from ..importers import (
    ImportPlan,
    InvalidRecord,
    MappingError,
    dry_run,
    iter_inputs,
    plan_import,
    plan_without_llm,
    render_dry_run,
    render_plan,
)
from ..pipeline.options import Mode
from . import outcome, to_kafka
from .context import AddCommand, Cli, graph, require_llm
from .inputs import Scan, batched, default_mapping_path, positive_arg, scan_file, valid_episodes
from .tables import dry_run_dict
from .tally import Tally, progress_bar

BATCH = 500
"""Episodes handed to the ingestor at a time: a big file is streamed, never loaded whole."""


def register(command: AddCommand) -> None:
    p = command("ingest", cmd_ingest, "ingest a JSONL file of episodes")
    p.add_argument("file", metavar="FILE", help="one JSON object per line: content, reference_time, "
                   "kind, speaker, group, source, name, id (.gz accepted)")  # fmt: skip
    _mode_option(p)
    p.add_argument("--skip-invalid", action="store_true", help="report and skip bad lines")
    to_kafka.add_options(p)

    p = command("import", cmd_import, "import a raw chat/document dataset through a field mapping")
    p.add_argument("file", metavar="FILE", help=".json, .jsonl, .csv, .tsv, .txt/.md or a folder of them")
    p.add_argument("--mapping", default="auto", metavar="auto|PATH", help="mapping file, or auto (default): "
                   "a known format, a saved <stem>.mapping.json, else one the LLM proposes")  # fmt: skip
    p.add_argument("--show-mapping", action="store_true", help="print the mapping used")
    p.add_argument("--dry-run", action="store_true", help="show the episodes it would create; ingest nothing")
    p.add_argument("--limit", type=positive_arg, metavar="N", help="at most N episodes")
    p.add_argument("--skip-invalid", action="store_true", help="report and skip invalid records")
    p.add_argument("--save-mapping", metavar="PATH", help="save the mapping used here")
    _mode_option(p)
    to_kafka.add_options(p)

    p = command("remove", cmd_remove, "delete an episode; facts it retired come back")
    p.add_argument("uuid", metavar="EPISODE_UUID")
    p = command("retry", cmd_retry, "run the group's failed and pending episodes again")
    _mode_option(p)


def _mode_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--mode", choices=get_args(Mode), help="extraction mode (default: the options' mode; the local "
        "model's is separate); bulk extracts several turns of a conversation a call"
    )  # fmt: skip


# ---------------------------------------------------------------------------------------- ingestion


Refused = set[tuple[str, str]]
"""The (uuid, content hash) of each episode refused for its id (taken by other content)."""


async def _check_ids(
    kg: KnowledgeGraph, args: argparse.Namespace, items: Iterable[EpisodeInput], file: str, scan: Scan
) -> Refused:
    """The whole input's ids, checked against the store and its earlier lines (the queue's
    ``conflict_check``) once the input is otherwise fit to ingest: each one taken by other content is
    added to ``scan`` as an InputError naming the file, line and field ``id``; returns them, to leave
    out with ``--skip-invalid``. Not for ``--to-kafka``: the workers refuse them (dead letters)."""
    refused: Refused = set()
    if args.to_kafka or (scan.invalid and not args.skip_invalid):
        return refused
    await kg.open()
    check = kg.ingestor.conflict_check()
    for item in items:
        if (conflict := await check.input(item)) is not None:
            scan.add_error(InputError(conflict.reason, file=file, line=item.line, field="id"))
            scan.valid -= 1
            refused.add(_key(item))
    return refused


def _key(item: EpisodeInput) -> tuple[str, str]:
    episode = item.to_episode()
    return episode.uuid, episode.content_hash


def _kept(items: Iterable[EpisodeInput], refused: Refused) -> Iterator[EpisodeInput]:
    return (item for item in items if not refused or _key(item) not in refused)


async def _ingest(
    cli: Cli,
    kg: KnowledgeGraph,
    items: Iterable[EpisodeInput],
    total: int,
    tally: Tally,
    mode: Mode | None,
) -> None:
    """Feed the ingestor batch by batch, driving the progress bar from its events."""
    with progress_bar(cli.err, total, tally, enabled=True) as bar:
        for batch in batched(items, BATCH):
            lines = [item.line for item in batch]
            tally.begin_batch(lines)
            async for event in kg.ingest(batch, mode=mode):
                bar.event(event)
                _waiting(cli, event, lines)
            tally.end_batch()


def _waiting(cli: Cli, event: ProgressEvent, lines: Sequence[int | None] = ()) -> None:
    """Say what an episode waits for (another process's claim on it: one killed leaves it until it
    lapses), and for how long at most, rather than wait in silence."""
    if not isinstance(event, EpisodeWaiting):
        return
    line = lines[event.index] if event.index < len(lines) else None
    which = f"episode {event.episode_uuid}" + (f" (line {line})" if line is not None else "")
    until = ""
    if event.until is not None:
        seconds = max(0.0, (event.until - utc_now()).total_seconds())
        until = f" until {event.until:%H:%M:%S} UTC (up to {seconds:.0f} s from now)"
    cli.note(
        f"waiting: {which} is claimed by another process ({event.owner}){until}; it runs here once the "
        "claim lapses (a process that was killed holds it until then), or is skipped if that process "
        "finishes it"
    )


async def cmd_ingest(cli: Cli, args: argparse.Namespace) -> int:
    path = Path(args.file)
    async with graph(cli) as kg:
        if not args.to_kafka:
            require_llm(kg, "ingest")
        scan = scan_file(path, kg.group_id)  # the whole file first: bad input ingests nothing
        if not scan.valid and not scan.invalid:
            raise InputError("holds no episode (every line is blank or a comment)", file=str(path))
        refused = await _check_ids(kg, args, valid_episodes(path, kg.group_id), str(path), scan)
        if scan.invalid and not args.skip_invalid:
            return outcome.reject(cli, scan.errors, scan.invalid, "line")
        outcome.skipped(cli, scan.errors, scan.invalid, "line")
        tally = Tally(invalid=scan.invalid)
        valid = _kept(valid_episodes(path, kg.group_id), refused)
        if args.to_kafka:
            return await to_kafka.publish(cli, kg, args, valid, {"file": str(path)})
        await _ingest(cli, kg, valid, scan.valid, tally, args.mode)
        groups = sorted(scan.groups) or [kg.group_id]
        title = f"ingested {path} into group{'s' * (len(groups) > 1)} {', '.join(map(repr, groups))}"
        return outcome.finish(cli, tally, title, {"file": str(path), "group_ids": groups})


async def cmd_retry(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        require_llm(kg, "retry")
        tally = Tally()  # started before the run: its elapsed time is the run's
        results = await kg.retry_failed(mode=args.mode, emit=lambda event: _waiting(cli, event))
        if not results and not cli.as_json:
            cli.write(f"nothing to retry in group {kg.group_id!r}")
            return 0
        tally.add_results(results)
        return outcome.finish(cli, tally, f"retried in group {kg.group_id!r}", {"group_id": kg.group_id})


async def cmd_remove(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        require_llm(kg, "remove")  # the touched entities' summaries are regenerated
        result = await kg.remove_episode(args.uuid)
    d = result.deletion
    if cli.as_json:
        cli.print_json({"episode": args.uuid, **asdict(d), "refreshed": [e.uuid for e in result.entities]})
    else:
        cli.write(
            f"removed episode {args.uuid}: {len(d.removed_facts)} facts removed, "
            f"{len(d.restored_facts)} restored, {len(d.removed_entities)} entities removed, "
            f"{len(result.entities)} summaries refreshed"
        )
    return 0


# ------------------------------------------------------------------------------------------- import


async def _plan(cli: Cli, kg: KnowledgeGraph, args: argparse.Namespace) -> ImportPlan:
    """The mapping: given; else a known format; else one saved earlier next to the file; else proposed."""
    saved = default_mapping_path(Path(args.file))
    if args.mapping == "auto" and saved.is_file():
        try:
            return plan_without_llm(args.file, "auto", group_id=kg.group_id)
        except MappingError:
            cli.note(f"using the mapping saved in {saved}")
            return plan_without_llm(args.file, saved, group_id=kg.group_id)
    return await plan_import(args.file, args.mapping, llm=kg.llm, group_id=kg.group_id)


def _show_plan(cli: Cli, plan: ImportPlan, args: argparse.Namespace) -> None:
    proposed = plan.origin.startswith("proposed")
    if args.show_mapping or proposed:
        cli.write(render_plan(plan), error=cli.as_json)
    target = args.save_mapping or (default_mapping_path(plan.path) if proposed else None)
    if target:
        saved = plan.save_mapping(target)
        cli.note(f"saved the mapping to {saved} (reuse it with --mapping {saved})")


def _inputs(plan: ImportPlan, limit: int | None) -> Iterator[EpisodeInput]:
    items = iter_inputs(plan, limit, skip_invalid=True)
    return (item for item in items if not isinstance(item, InvalidRecord))


async def cmd_import(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli) as kg:
        if not args.dry_run and not args.to_kafka:
            require_llm(kg, "import")
        plan = await _plan(cli, kg, args)
        _show_plan(cli, plan, args)
        if args.dry_run:
            report = dry_run(plan, show=5, limit=args.limit)
            if cli.as_json:
                cli.print_json(dry_run_dict(report))
            else:
                cli.write(render_dry_run(report))
            return 0
        check = dry_run(plan, show=0, limit=args.limit)  # the whole input first: bad records ingest nothing
        scan = Scan(invalid=check.stats.invalid, errors=[bad.error() for bad in check.invalid])
        refused = await _check_ids(kg, args, _inputs(plan, args.limit), str(plan.path), scan)
        if scan.invalid and not args.skip_invalid:
            return outcome.reject(cli, scan.errors, scan.invalid, "record")
        outcome.skipped(cli, scan.errors, scan.invalid, "record")
        tally = Tally(invalid=scan.invalid)
        valid = _kept(_inputs(plan, args.limit), refused)
        extra = {"file": str(plan.path), "group_id": plan.group_id, "mapping_origin": plan.origin}
        if args.to_kafka:
            return await to_kafka.publish(cli, kg, args, valid, extra)
        await _ingest(cli, kg, valid, check.total, tally, args.mode)
        return outcome.finish(cli, tally, f"imported {plan.path} into group {plan.group_id!r}", extra)
