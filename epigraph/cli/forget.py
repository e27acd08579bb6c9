"""Forgetting from the shell (``epigraph.forget``): a subject, its audit records, the group's retention::

    epigraph forget NAME [--episodes redact|delete] [--also NAME]... [--yes [--expect PLAN]]
    epigraph forgotten [--name NAME] [--limit N]
    epigraph retention show | set DAYS | clear | apply [--yes [--expect PLAN]]

``forget`` and ``retention apply`` preview (what would go, counts and ids: nothing changes) unless given
``--yes``; ``--expect PLAN`` forgets only the plan a preview printed (exit code 1 when the group changed
since). NAME is an entity's id, name or alias; a name two entities share is refused with their ids
(exit code 2). No LLM is needed: without one, the summaries a model wrote wait for the next batch.
"""

from __future__ import annotations

import argparse

from ..errors import UsageError
from ..forget import ForgetResult
from ..graph.forgetting import EPISODE_CHOICES, ForgetRecord
from ..present.tables import Table, fmt_time, rich_table
from .context import AddCommand, Cli, graph
from .inputs import positive_arg

RETENTION_ACTIONS = ("show", "set", "clear", "apply")


def _apply_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--yes", action="store_true", help=f"forget {what} (without it: a preview, nothing changes)"
    )
    p.add_argument("--expect", metavar="PLAN", help="with --yes: forget only the plan a preview printed")


def register(command: AddCommand) -> None:
    p = command("forget", cmd_forget, "forget an entity: its facts, aliases, vectors and its name everywhere")
    p.add_argument("subject", metavar="NAME", help="the entity's id, name or alias")
    p.add_argument("--episodes", choices=EPISODE_CHOICES, default="redact",
                   help="the episodes that mention it: redact (default: the name taken out, the other "
                   "facts kept) or delete (with what only they say)")  # fmt: skip
    p.add_argument("--also", action="append", default=[], metavar="NAME",
                   help="another spelling to take out (repeatable)")  # fmt: skip
    p.add_argument("--placeholder", metavar="TEXT", help="what replaces the name (default [forgotten])")
    _apply_options(p, "it")

    p = command("forgotten", cmd_forgotten, "the audit records of what was forgotten, newest first")
    p.add_argument("--name", metavar="NAME", help="only those that forgot a subject of this name")
    p.add_argument("--limit", type=positive_arg, default=50, metavar="N", help="at most N (default 50)")

    p = command("retention", cmd_retention, "the group's retention: how long it keeps its episodes")
    p.add_argument("action", choices=RETENTION_ACTIONS, help="show | set DAYS | clear | apply (the older "
                   "episodes, and what only they support, forgotten)")  # fmt: skip
    p.add_argument("days", nargs="?", type=positive_arg, metavar="DAYS", help="set: keep episodes DAYS days")
    _apply_options(p, "the older episodes")


async def cmd_forget(cli: Cli, args: argparse.Namespace) -> int:
    _expect_needs_yes(args)
    async with graph(cli, existing=True) as kg:
        result = await kg.forget(
            args.subject, episodes=args.episodes, also=args.also, placeholder=args.placeholder,
            apply=args.yes, expect=args.expect, call="cli",
        )  # fmt: skip
    return _shown(cli, result, "epigraph forget NAME --yes")


async def cmd_forgotten(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        records = await kg.forget.history(name=args.name, limit=args.limit)
    cli.show(rich_table(_records_table(cli.settings.group_id, records)),
             {"forgotten": [r.model_dump(mode="json") for r in records]})  # fmt: skip
    return 0


async def cmd_retention(cli: Cli, args: argparse.Namespace) -> int:
    if args.action != "set" and args.days is not None:
        raise UsageError(f"`epigraph retention {args.action}` takes no DAYS")
    if args.action != "apply" and (args.yes or args.expect):
        raise UsageError("--yes and --expect go with `epigraph retention apply`")
    _expect_needs_yes(args)
    async with graph(cli, existing=True) as kg:
        if args.action == "apply":
            result = await kg.forget.apply_retention(apply=args.yes, expect=args.expect, call="cli")
            return _shown(cli, result, "epigraph retention apply --yes")
        if args.action == "set":
            if args.days is None:
                raise UsageError("`epigraph retention set` takes DAYS: how long the group keeps its episodes")
            policy = await kg.forget.set_retention(args.days)
        elif args.action == "clear":
            cleared = await kg.forget.clear_retention()
            policy = None
            if not cli.as_json:
                cli.note("retention cleared" if cleared else "the group had no retention policy")
        else:
            policy = await kg.forget.retention()
    group = cli.settings.group_id
    data = {"group_id": group, "retention": None if policy is None else policy.model_dump(mode="json")}
    said = f"group {group!r} keeps everything" if policy is None else (
        f"group {group!r} keeps its episodes {policy.days} days (set {fmt_time(policy.updated_at)})"
    )  # fmt: skip
    if cli.as_json:
        cli.print_json(data)
    else:
        cli.write(said)
    return 0


def _expect_needs_yes(args: argparse.Namespace) -> None:
    if args.expect and not args.yes:
        raise UsageError("--expect PLAN forgets a previewed plan: it goes with --yes")


def _shown(cli: Cli, result: ForgetResult, how: str) -> int:
    cli.show(result, result.to_dict())
    if not result.applied and not result.empty and not cli.as_json:
        cli.note(f"a preview: nothing changed. `{how} --expect {result.digest}` forgets exactly this")
    return 0


def _records_table(group: str, records: list[ForgetRecord]) -> Table:
    rows = tuple(
        (fmt_time(r.at), r.call, r.uuid, "retention" if r.subject is None else f"a subject ({r.episodes})",
         ", ".join(f"{n} {k}" for k, n in r.counts.items() if n and k in _SHOWN))
        for r in records
    )  # fmt: skip
    return Table(f"forgotten in group {group!r}", ("when", "by", "record", "what", "counts"), rows)


_SHOWN = ("entities", "facts", "episodes_deleted", "episodes_redacted", "facts_redacted")
