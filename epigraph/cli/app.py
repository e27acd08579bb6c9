"""The ``epigraph`` command: build, search and explore a temporal knowledge graph from the shell.

::

    epigraph ingest episodes.jsonl                 # JSONL episodes; live progress bar, summary table
    epigraph import locomo.json --dry-run          # a raw dataset through a field mapping (no LLM needed)
    epigraph search "where does Alice live?" --as-of 2023-06-01
    epigraph ask "where did Alice live in 2022?"    # streamed answer with cited facts and episodes
    epigraph entity Alice --html alice.html
    epigraph fact add Bob "works at" Acme --by alice;  epigraph entity merge Bob Robert;  epigraph undo ID
    epigraph export graph.jsonl;  EPIGRAPH_NEO4J_URI=bolt://... epigraph load graph.jsonl
    epigraph forget Dana [--episodes delete] [--yes];  epigraph forgotten;  epigraph retention set 30
    epigraph episodes --status failed;  epigraph retry;  epigraph remove UUID;  epigraph stats
    epigraph communities --rebuild; epigraph communities --as-of 2023-06-01; epigraph conversations chat-7
    epigraph model start                           # the local model (epigraph[local-model]); stop, status
    epigraph --redact ingest chat.jsonl;  epigraph reveal --episode UUID;  epigraph redact-key

Global options, before or after the command: ``--db PATH`` (the embedded store file; overrides
EPIGRAPH_DB), ``--group G`` (overrides EPIGRAPH_GROUP), ``--json`` (machine-readable output on stdout).
Everything else is configured by ``EPIGRAPH_*`` variables, read once by :meth:`Settings.from_env`.

Exit codes: 0 success; 1 a failure (an episode failed, something was not found, the LLM or the store
failed); 2 a usage error (bad arguments, bad input, missing configuration; nothing was ingested);
130 interrupted. Errors are one message on stderr, never a traceback, never a secret; with ``--json``
also one JSON object on stdout (:mod:`epigraph.cli.failures`).

Each command group is a module of this package with a ``register(command)`` function (see
:mod:`epigraph.cli.context`), listed in :data:`COMMANDS`: a new command is a new module, imported here
with its ``register`` added to ``COMMANDS``. This is the only module of epigraph that calls
``asyncio.run``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn

from rich.console import Console

from ..client import KnowledgeGraph
from ..config import Settings
from ..errors import EpigraphError, UsageError
from ..graph.model import check_group_id
from ..version import __version__
from . import (
    ask,
    edit,
    failures,
    forget,
    ingest,
    model,
    overview,
    privacy,
    read,
    serve,
    transfer,
    vector_index,
    worker,
)
from .context import Cli, KGFactory, Register, Run

COMMANDS: tuple[Register, ...] = (
    ingest.register,  # ingest, import, remove, retry
    read.register,  # search, entity, episodes, explain, changes, stats
    overview.register,  # communities, conversations
    vector_index.register,  # index
    ask.register,  # ask
    edit.register,  # fact add|retire|edit|delete, corrections, undo, group delete (entity merge|... in read)
    transfer.register,  # export, load
    forget.register,  # forget, forgotten, retention
    privacy.register,  # reveal, redact-key
    model.register,  # model start|stop|status
    serve.register,  # serve, mcp
    worker.register,  # worker (Kafka)
)
"""The command groups, in the order ``epigraph --help`` lists their commands."""

ENVIRONMENT = (
    """\
environment:
  EPIGRAPH_DB, EPIGRAPH_GROUP                  store file (./epigraph.db) and group (default)
  EPIGRAPH_LLM_BASE_URL, _API_KEY, _MODEL      the LLM (ingest, import, retry, remove, ask, --update)
  EPIGRAPH_LLM=local                           or the local model (see `epigraph model start`)
  EPIGRAPH_EMBEDDER                            sentence-transformers (default), openai or hash
  EPIGRAPH_NEO4J_URI, _USER, _PASSWORD         use Neo4j instead of the embedded store
  EPIGRAPH_REDACT=1, EPIGRAPH_REDACT_KEY       personal data replaced at the door; originals sealed by the key
  (the full list is in epigraph/config.py)

"""
    + failures.EXIT_CODES
)


class _BadArguments(Exception):
    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser, self.message = parser, message


class _Parser(argparse.ArgumentParser):
    """argparse, except that a refused argument is raised (``main`` reports it, as text or JSON)."""

    def error(self, message: str) -> NoReturn:
        raise _BadArguments(self, message)


def _common() -> _Parser:
    """Options accepted before and after the command (SUPPRESS: a later parser never resets them)."""
    common = _Parser(add_help=False)
    s = argparse.SUPPRESS
    common.add_argument("--db", metavar="PATH", default=s, help="embedded store file (overrides EPIGRAPH_DB)")
    common.add_argument("--group", metavar="G", default=s, help="group id (overrides EPIGRAPH_GROUP)")
    common.add_argument(
        "--json", action="store_true", default=s, help="machine-readable output on stdout (failures too)"
    )
    common.add_argument(
        "--redact", action="store_true", default=s,
        help="replace personal data before it is stored or sent to the model (overrides EPIGRAPH_REDACT)",
    )  # fmt: skip
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = _Parser(
        prog="epigraph",
        description="Turn chat episodes and documents into a temporal knowledge graph; search, explore it.",
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"epigraph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, run: Run, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help, description=help)
        p.set_defaults(run=run)
        return p

    for register in COMMANDS:
        register(command)
    return parser


def _settings(args: argparse.Namespace, environ: Mapping[str, str] | None) -> Settings:
    overrides = {
        "db_path": getattr(args, "db", None),
        "group_id": getattr(args, "group", None),
        "redact": getattr(args, "redact", None),
    }
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
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(words)
    except SystemExit as exc:  # --help
        return _exit_code(exc.code)
    except _BadArguments as exc:
        if "--json" in words:
            return failures.bad_argument(exc.message).report(
                as_json=True, stdout=sys.stdout, stderr=sys.stderr
            )
        exc.parser.print_usage(sys.stderr)
        print(f"{exc.parser.prog}: error: {exc.message}", file=sys.stderr)
        return failures.USAGE
    as_json = bool(getattr(args, "json", False))
    failed = _run(args, as_json, environ, kg_factory)
    if isinstance(failed, int):
        return failed
    return failed.report(as_json=as_json, stdout=sys.stdout, stderr=sys.stderr)


def _run(
    args: argparse.Namespace, as_json: bool, environ: Mapping[str, str] | None, kg_factory: KGFactory | None
) -> int | failures.Failed:
    """The command's exit code, or how it failed."""
    stdout_tty = sys.stdout.isatty()
    cli_out = Console(file=sys.stdout, highlight=False, width=None if stdout_tty else 160)
    cli_err = Console(file=sys.stderr, highlight=False)
    try:
        settings = _settings(args, environ)
        cli = Cli(cli_out, cli_err, as_json, settings, kg_factory or KnowledgeGraph)
        return int(asyncio.run(args.run(cli, args)))
    except KeyboardInterrupt:
        message = "interrupted (run `epigraph retry` to finish pending episodes)"
        return failures.Failed("Interrupted", message, failures.INTERRUPTED)
    except OSError as exc:
        return failures.Failed("OSError", str(exc), failures.FAILURE)
    except Exception as exc:
        error = _epigraph_error(exc)
        if error is None:
            raise
        return failures.from_error(error)
