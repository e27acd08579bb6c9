"""``epigraph export`` and ``epigraph load``: a group (or several, or all) as a versioned JSON Lines dump
(docs/dump-format.md), to move a graph between stores (``EPIGRAPH_NEO4J_URI`` picks Neo4j) without
ingesting it again::

    epigraph export graph.jsonl [--all | --groups A,B] [--vectors]      # - (the default): stdout
    epigraph load graph.jsonl [--into G]                               # into empty groups only

The export reads one consistent state of the store (a running server's file too); the file appears only
when it is complete. The load checks every line before writing anything (a problem is named by file, line
and field: exit code 2), and writes each group in one transaction.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import ConflictError
from ..transfer import LoadReport
from .context import AddCommand, Cli, graph


def register(command: AddCommand) -> None:
    p = command("export", cmd_export, "write the group (or all groups) as a JSON Lines dump")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="where (default -: stdout; .gz: "
                   "compressed)")  # fmt: skip
    chosen = p.add_mutually_exclusive_group()
    chosen.add_argument("--all", action="store_true", help="every group of the store")
    chosen.add_argument("--groups", metavar="G,G", help="these groups (default: --group / EPIGRAPH_GROUP)")
    p.add_argument("--vectors", action="store_true", help="include the embeddings (else computed on load)")

    p = command("load", cmd_load, "load a dump written by `epigraph export` into this store")
    p.add_argument("file", metavar="FILE", help="the dump (.jsonl, or .jsonl.gz)")
    p.add_argument("--into", metavar="G", help="load a one-group dump as group G")


async def cmd_export(cli: Cli, args: argparse.Namespace) -> int:
    groups: str | list[str] | None = "*" if args.all else None
    if args.groups:
        groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    async with graph(cli, existing=True) as kg:
        if args.file == "-":
            async for line in kg.transfer.export_lines(groups=groups, vectors=args.vectors):
                sys.stdout.write(line + "\n")
            sys.stdout.flush()
            return 0
        counts = await kg.transfer.export(Path(args.file), groups=groups, vectors=args.vectors)
    if cli.as_json:
        cli.print_json({"file": args.file, "counts": counts})
    else:
        for group, kinds in counts.items():
            cli.note(f"wrote group {group!r} to {args.file}: {_listed(kinds)}")
    return 0


async def cmd_load(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli) as kg:
        try:
            report = await kg.transfer.load(Path(args.file), into=args.into)
        except ConflictError as exc:  # the library's message names no door's way of choosing the group
            raise ConflictError(f"{exc} (here: --into G)") from None
    if cli.as_json:
        cli.print_json(_report_dict(report))
    else:
        for group, kinds in report.groups.items():
            cli.write(f"loaded group {group!r}: {_listed(kinds)}")
        cli.note(f"embeddings: {_embeddings(report)}")
    return 0


PLURALS = {"episode": "episodes", "entity": "entities", "fact": "facts", "mention": "mentions",
           "correction": "corrections", "forgetting": "forgettings"}  # fmt: skip


def _listed(kinds: dict[str, int]) -> str:
    return ", ".join(f"{n} {PLURALS.get(kind, kind)}" for kind, n in kinds.items())


def _embeddings(report: LoadReport) -> str:
    if report.embeddings == "dump":
        return "the dump's (the same embedder)"
    if report.embeddings == "computed":
        return f"computed by this graph's embedder ({report.embedded} texts)"
    return "none"


def _report_dict(report: LoadReport) -> dict[str, object]:
    return {"groups": report.groups, "embeddings": report.embeddings, "embedded": report.embedded,
            "renamed": report.renamed}  # fmt: skip
