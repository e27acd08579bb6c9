"""Commands that read the graph: ``search`` (hybrid, current facts unless told otherwise), ``entity`` (one
entity's view with its corrections by hand; ``--html [FILE]`` also writes its interactive view, ``--svg
FILE`` a static picture; ``entity merge|unmerge|rename`` are corrections, in ``edit``),
``episodes`` (newest first), ``changes`` (what changed in a window, by entity), ``explain`` (why the graph
holds a fact or an entity: the chain from the message) and ``stats``.

They read a graph that exists: a missing store file is an error (exit 1) and is never created, and a
search of a group without episodes finds nothing without loading the embedding model.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..errors import UsageError
from ..graph.changes import KINDS
from ..graph.model import EpisodeStatus
from ..present import EpisodeList, StatsView
from ..search import DEFAULT, RECIPES, SearchResults
from . import edit
from .context import AddCommand, Cli, graph
from .inputs import date_arg, positive_arg, recipe_arg


def register(command: AddCommand) -> None:
    p = command("search", cmd_search, "hybrid search (current facts unless told otherwise)")
    p.add_argument("query", metavar="QUERY")
    p.add_argument(
        "--as-of", type=date_arg, metavar="DATE", help="as of DATE (event time): facts true, entities named"
    )
    p.add_argument("--known-at", type=date_arg, metavar="DATE", help="as the graph knew it at DATE")
    p.add_argument("--include-retired", action="store_true", help="retired facts too")
    p.add_argument("--recipe", type=recipe_arg, metavar="NAME", help=f"one of {', '.join(sorted(RECIPES))}")
    p.add_argument("--limit", type=positive_arg, metavar="N", help="results per kind")

    p = command(
        "entity",
        cmd_entity,
        "one entity: summary, aliases, facts, history, episodes (or merge, unmerge, rename)",
    )
    p.add_argument("name", metavar="NAME", help="a name, an alias or a uuid; or merge, unmerge, rename")
    edit.entity_options(p)
    p.add_argument(
        "--as-of", type=date_arg, metavar="DATE",
        help="as it was at DATE: its aliases and summary then, the facts current then, the history by then, "
        "the episodes said by then",
    )  # fmt: skip
    picture = p.add_mutually_exclusive_group()
    picture.add_argument("--svg", metavar="FILE", help="also write a static picture of its neighbourhood")
    picture.add_argument(
        "--html", nargs="?", const="", metavar="FILE",
        help="also write its interactive view as one offline page (default FILE: NAME.html)",
    )  # fmt: skip

    p = command("episodes", cmd_episodes, "list episodes, newest first")
    p.add_argument("--since", type=date_arg, metavar="DATE", help="reference time >= DATE")
    p.add_argument("--until", type=date_arg, metavar="DATE", help="reference time < DATE")
    p.add_argument("--status", choices=[s.value for s in EpisodeStatus])
    p.add_argument("--limit", type=positive_arg, default=50, metavar="N", help="at most N (default 50)")

    p = command("explain", cmd_explain, "why the graph holds a fact or an entity: the chain from the message")
    p.add_argument("subject", metavar="FACT_ID|NAME", help="a fact's id, or an entity's name, alias or uuid")

    p = command("changes", cmd_changes, "what changed in a window, by entity (both time axes, the sources)")
    p.add_argument("--since", type=date_arg, metavar="DATE", help="from DATE (included; default: the start)")
    p.add_argument("--until", type=date_arg, metavar="DATE", help="until DATE (excluded; default: no end)")
    p.add_argument(
        "--kind", action="append", choices=[k.value for k in KINDS], metavar="KIND",
        help=f"only this kind (repeatable): {', '.join(KINDS)}; started and ended are read on event "
        "time, the others on system time",
    )  # fmt: skip
    p.add_argument("--limit", type=positive_arg, default=1000, metavar="N",
                   help="read at most N facts, N corrections and N forgettings (default 1000)")  # fmt: skip

    command("stats", cmd_stats, "counts of episodes, entities and facts in the group")


async def cmd_search(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        if not args.query.strip():
            raise UsageError("search needs a non-empty query")
        if not await kg.episodes(limit=1):  # an empty group: nothing to find, no embedding model to load
            recipe = args.recipe or DEFAULT
            results = SearchResults(args.query.strip(), (kg.group_id,), recipe.name, as_of=args.as_of,
                                    known_at=args.known_at, include_retired=args.include_retired)  # fmt: skip
        else:
            results = await kg.search(
                args.query,
                config=args.recipe or DEFAULT,
                as_of=args.as_of,
                known_at=args.known_at,
                include_retired=args.include_retired,
                limit=args.limit,
            )
    cli.show(results, results.to_dict())
    return 0


def page_name(name: str) -> Path:
    """``NAME.html`` in the current directory, the name made safe for a file name."""
    return Path((re.sub(r"[^\w.-]+", "_", name).strip("._") or "entity") + ".html")


def _write(target: Path, text: str) -> Path:
    target.write_text(text, encoding="utf-8")
    return target


async def cmd_entity(cli: Cli, args: argparse.Namespace) -> int:
    if args.name in edit.ENTITY_ACTIONS and args.words:
        return await edit.entity_action(cli, args)
    if args.words:
        raise UsageError(f"`epigraph entity NAME` takes one name; got also {' '.join(args.words)!r}")
    async with graph(cli, existing=True) as kg:
        view = await kg.entity(args.name, as_of=args.as_of)
        picture = None
        if args.html is not None:  # the page opens at --as-of, as the view above
            picture = await kg.subgraph(view.entity.uuid, include_retired=True, as_of=args.as_of)
    if args.svg:
        cli.note(f"wrote {_write(Path(args.svg), view.draw().to_svg())}")
    if picture is not None:
        target = _write(Path(args.html) if args.html else page_name(view.name), picture.to_html())
        cli.note(f"wrote {target} (the interactive view: open it in a browser)")
    cli.show(view, view.to_dict())
    return 0


async def cmd_episodes(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        status = EpisodeStatus(args.status) if args.status else None
        found = await kg.episodes(since=args.since, until=args.until, status=status, limit=args.limit)
    listing = EpisodeList(kg.group_id, found, since=args.since, until=args.until)
    cli.show(listing, listing.records())
    return 0


async def cmd_changes(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        listing = await kg.changes(args.since, args.until, kinds=args.kind, limit=args.limit)
    cli.show(listing, listing.to_dict())
    return 0


async def cmd_explain(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        explanation = await kg.explain(args.subject)
    cli.show(explanation, explanation.to_dict())
    return 0


async def cmd_stats(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        stats = await kg.stats()
        stuck = {
            f"{s.value}_episodes": len(await kg.episodes(status=s, limit=None))
            for s in (EpisodeStatus.FAILED, EpisodeStatus.PENDING)
        }
    where = {"group_id": kg.group_id, "store": cli.settings.store_kind}
    if cli.settings.store_kind == "embedded":
        where["db"] = cli.settings.db_path
    view = StatsView(stats, kg.group_id, stuck, where=where.get("db", where["store"]))
    cli.show(view, {**where, **view.to_dict()})
    return 0
