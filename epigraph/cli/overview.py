"""The big picture: ``communities`` (list them, now or ``--as-of`` a date; ``--update`` / ``--rebuild``
them first) and ``conversations`` (every conversation with its summary, or one with its episodes in
order; ``--update`` folds new episodes into the summaries first). Both read a graph that exists: a
missing store file is an error (exit 1), never created."""

from __future__ import annotations

import argparse

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..overview import ChainView, CommunityUpdate, CommunityView, Conversation, ConversationUpdate
from .context import AddCommand, Cli, graph, require_llm
from .inputs import date_arg, positive_arg


def register(command: AddCommand) -> None:
    p = command("communities", cmd_communities, "communities of entities, with their names and summaries")
    p.add_argument("--as-of", type=date_arg, metavar="DATE", help="clusters of the facts true at DATE")
    p.add_argument("--known-at", type=date_arg, metavar="DATE", help="as the graph knew it at DATE")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--update", action="store_true", help="update them first (needs an LLM)")
    how.add_argument("--rebuild", action="store_true", help="cluster everything afresh first (needs an LLM)")

    p = command("conversations", cmd_conversations, "conversations (episodes by source) and their summaries")
    p.add_argument(
        "key", nargs="?", metavar="KEY", help="one conversation: its summary and episodes in order"
    )
    p.add_argument("--update", action="store_true", help="fold new episodes into the summaries first")
    p.add_argument("--rebuild", action="store_true", help="fold every episode again (with --update)")
    p.add_argument(
        "--limit", type=positive_arg, default=50, metavar="N", help="latest N episodes (default 50)"
    )


async def cmd_communities(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        update: CommunityUpdate | None = None
        if args.update or args.rebuild:
            require_llm(kg, "communities --update")
            overview = kg.overview
            update = await (overview.build_communities() if args.rebuild else overview.update_communities())
        views = await kg.overview.communities(as_of=args.as_of, known_at=args.known_at)
    if cli.as_json:
        data = {"group_id": kg.group_id, "communities": [v.to_dict() for v in views]}
        cli.print_json({**data, "update": update.to_dict()} if update else data)
        return 0
    if update is not None:
        cli.note(_update_line(update))
    when = " as of " + str(args.as_of.date()) if args.as_of else ""
    cli.out.print(communities_table(views, f"communities of group {kg.group_id!r}{when}"))
    return 0


async def cmd_conversations(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        updates: list[ConversationUpdate] = []
        if args.update:
            require_llm(kg, "conversations --update")
            keys = [args.key] if args.key else None
            updates = await kg.overview.update_conversations(keys, rebuild=args.rebuild)
        if args.key:
            one = await kg.overview.conversation(args.key, limit=args.limit)
            if cli.as_json:
                cli.print_json({**one.to_dict(), "updates": [u.to_dict() for u in updates]})
            else:
                _notes(cli, updates)
                cli.out.print(conversation_renderable(one))
            return 0
        views = await kg.overview.conversations()
    if cli.as_json:
        data = {"group_id": kg.group_id, "conversations": [v.to_dict() for v in views]}
        cli.print_json({**data, "updates": [u.to_dict() for u in updates]})
        return 0
    _notes(cli, updates)
    cli.out.print(chains_table(views, f"conversations of group {kg.group_id!r}"))
    return 0


def _update_line(update: CommunityUpdate) -> str:
    how = "rebuilt" if update.rebuilt else "updated"
    r = update.report
    return (
        f"{how}: {len(update.communities)} communities, {update.summarized} named by the model, "
        f"{update.kept} kept, {update.dissolved} dissolved ({r.llm_calls} LLM calls, {update.seconds:.1f} s)"
    )


def _notes(cli: Cli, updates: list[ConversationUpdate]) -> None:
    for u in updates:
        trouble = " (another updater was first)" if u.conflict else f" ({u.error})" if u.error else ""
        cli.note(f"{u.key}: {u.folded} new episodes folded in, {u.report.llm_calls} LLM calls{trouble}")


def communities_table(views: list[CommunityView], title: str) -> Table:
    table = Table(title=title, title_justify="left", show_lines=True)
    for column in ("community", "members", "summary"):
        table.add_column(column, overflow="fold")
    for v in views:
        name = Text(v.community.name, style="bold" if v.stored else "dim")
        shown = ", ".join(e.name for e in v.members[:8]) + (f" and {v.size - 8} more" if v.size > 8 else "")
        summary = v.community.summary or ("(not summarized yet)" if v.stored else "(no stored community)")
        table.add_row(name, f"{v.size}: {shown}", summary)
    if not views:
        table.add_row("(none)", "", "build them with `epigraph communities --rebuild`")
    return table


def chains_table(views: list[ChainView], title: str) -> Table:
    table = Table(title=title, title_justify="left", show_lines=True)
    for column in ("conversation", "episodes", "from", "to", "summary"):
        table.add_column(column, overflow="fold")
    for v in views:
        c = v.chain
        behind = f" ({v.unsummarized} not summarized)" if v.unsummarized else ""
        summary = v.summary.summary if v.summary and v.summary.summary else "(no summary yet)"
        table.add_row(
            c.key, f"{c.episodes}{behind}", f"{c.first_at:%Y-%m-%d}", f"{c.last_at:%Y-%m-%d}", summary
        )
    return table


def conversation_renderable(one: Conversation) -> RenderableType:
    summary = one.summary.summary if one.summary and one.summary.summary else "(no summary yet)"
    table = Table(title=f"latest {len(one.episodes)} of {one.total} episodes", title_justify="left")
    table.add_column("when")
    table.add_column("content", overflow="fold")
    for e in one.episodes:
        table.add_row(f"{e.reference_time:%Y-%m-%d %H:%M}", e.content)
    return Group(Text(f"{one.key}", style="bold"), Text(summary), table)
