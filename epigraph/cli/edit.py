"""Corrections by hand from the shell (``epigraph.edit``), each recorded with its author (``--by``, or
EPIGRAPH_AUTHOR) and undoable::

    epigraph fact add Bob "works at" Acme --valid-at 2024-01-01 --by alice [--create] [--retires FACT]
    epigraph fact retire FACT [--at DATE];  fact delete FACT
    epigraph fact edit FACT [--text T] [--relation WORDS] [--valid-at D|none] [--invalid-at D|none]
    epigraph entity merge KEEP OTHER;  entity unmerge NAME;  entity rename NAME NEW [--drop-alias]
    epigraph corrections [--entity NAME];  epigraph undo CORRECTION
    epigraph group delete --yes

``entity NAME`` alone still shows the entity (``read``); these are its actions. Each prints the correction
(``--json``: its full record). No LLM is needed: without one, summaries are composed from the facts.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from datetime import datetime
from typing import Any

from ..edit import UNSET
from ..edit.build import MaybeTime
from ..errors import UsageError
from ..graph.corrections import Correction
from ..present.corrections import CorrectionList, correction_record, describe
from .context import AddCommand, Cli, graph
from .inputs import date_arg, positive_arg

FACT_ACTIONS = {"add": 3, "retire": 1, "edit": 1, "delete": 1}
"""``fact`` actions and how many words each takes."""
ENTITY_ACTIONS = {"merge": 2, "unmerge": 1, "rename": 2}


def author_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--by", metavar="AUTHOR", help="who makes the correction (alice, person:alice; default "
                   "EPIGRAPH_AUTHOR)")  # fmt: skip
    p.add_argument("--reason", default="", metavar="TEXT", help="why (kept with the correction)")


def register(command: AddCommand) -> None:
    p = command("fact", cmd_fact, "correct a fact by hand: add, retire, edit or delete one")
    p.add_argument("action", choices=tuple(FACT_ACTIONS), help="add SOURCE RELATION TARGET | retire FACT | "
                   "edit FACT | delete FACT (FACT: a fact's uuid)")  # fmt: skip
    p.add_argument("words", nargs="*", metavar="ARG", help="the action's arguments")
    p.add_argument("--text", metavar="TEXT", help="the fact's sentence (add: default from its ends)")
    p.add_argument("--relation", metavar="WORDS", help="edit: a new relation (e.g. 'works at')")
    p.add_argument("--valid-at", metavar="DATE", help="when it began (edit: 'none' clears it)")
    p.add_argument("--invalid-at", metavar="DATE", help="when it ended (edit: 'none' clears it)")
    p.add_argument("--at", type=date_arg, metavar="DATE", help="retire: when it stopped being true (now)")
    p.add_argument("--create", action="store_true", help="add: create the entities no entity is named so")
    p.add_argument("--retires", action="append", default=[], metavar="FACT",
                   help="add: a fact the new one ends (repeatable)")  # fmt: skip
    author_options(p)

    p = command("corrections", cmd_corrections, "the corrections made by hand, newest first")
    p.add_argument("--entity", metavar="NAME", help="only those that touched this entity")
    p.add_argument("--limit", type=positive_arg, default=50, metavar="N", help="at most N (default 50)")

    p = command("undo", cmd_undo, "undo a correction (while the graph still holds what it wrote)")
    p.add_argument(
        "correction", metavar="CORRECTION", help="the correction's uuid (see `epigraph corrections`)"
    )
    author_options(p)

    p = command("group", cmd_group, "delete the whole group (everything in it; export it first)")
    p.add_argument("action", choices=("delete",))
    p.add_argument("--yes", action="store_true", help="really delete it (required)")


def entity_options(p: argparse.ArgumentParser) -> None:
    """What ``entity``'s actions add to its parser (``read`` registers the command)."""
    p.add_argument(
        "words", nargs="*", metavar="ARG", help="merge KEEP OTHER | unmerge NAME | rename NAME NEW"
    )
    p.add_argument("--drop-alias", action="store_true", help="rename: do not keep the old name as an alias")
    author_options(p)


def _words(args: argparse.Namespace, wanted: int, usage: str) -> list[str]:
    words: list[str] = list(args.words)
    if len(words) != wanted:
        raise UsageError(f"usage: epigraph {usage} (got {len(words)} argument(s))")
    return words


def _time(text: str | None) -> MaybeTime:
    """An option's time: unset, ``none`` (cleared) or a date."""
    if text is None:
        return UNSET
    if text.strip().lower() == "none":
        return None
    try:
        return date_arg(text)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(str(exc)) from None


def _given(value: MaybeTime, option: str) -> datetime | None:
    if isinstance(value, datetime) or value is None:
        return value
    if value is UNSET:
        return None
    raise UsageError(f"{option}: a date")


def _show(cli: Cli, correction: Correction) -> int:
    if cli.as_json:
        cli.print_json(correction_record(correction))
    else:
        cli.write(f"{describe(correction)}  [correction {correction.uuid} by {correction.author}]")
    return 0


async def cmd_fact(cli: Cli, args: argparse.Namespace) -> int:
    action = args.action
    async with graph(cli, existing=True) as kg:
        who = {"author": args.by, "reason": args.reason}
        if action == "add":
            source, relation, target = _words(args, 3, "fact add SOURCE RELATION TARGET")
            made = await kg.corrections.add_fact(
                source, relation, target, text=args.text, valid_at=_given(_time(args.valid_at), "--valid-at"),
                invalid_at=_given(_time(args.invalid_at), "--invalid-at"), create=args.create,
                retires=args.retires, **who,
            )  # fmt: skip
        else:
            [uuid] = _words(args, 1, f"fact {action} FACT")
            if action == "retire":
                made = await kg.corrections.retire_fact(uuid, at=args.at, **who)
            elif action == "edit":
                made = await kg.corrections.edit_fact(
                    uuid, text=args.text, relation=args.relation, valid_at=_time(args.valid_at),
                    invalid_at=_time(args.invalid_at), **who,
                )  # fmt: skip
            else:
                made = await kg.corrections.delete_fact(uuid, **who)
    return _show(cli, made)


async def entity_action(cli: Cli, args: argparse.Namespace) -> int:
    """``entity merge|unmerge|rename ...`` (``read.cmd_entity`` hands them here)."""
    action = args.name
    async with graph(cli, existing=True) as kg:
        who = {"author": args.by, "reason": args.reason}
        if action == "merge":
            keep, other = _words(args, 2, "entity merge KEEP OTHER")
            made = await kg.corrections.merge_entities(keep, other, **who)
        elif action == "unmerge":
            [name] = _words(args, 1, "entity unmerge NAME")
            made = await kg.corrections.unmerge_entities(name, **who)
        else:
            name, new = _words(args, 2, "entity rename NAME NEW")
            made = await kg.corrections.rename_entity(name, new, keep_alias=not args.drop_alias, **who)
    return _show(cli, made)


async def cmd_corrections(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        found = await kg.corrections.history(entity=args.entity, limit=args.limit)
    listing = CorrectionList(kg.group_id, found)
    cli.show(listing, listing.records())
    return 0


async def cmd_undo(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        made = await kg.corrections.undo(args.correction, author=args.by, reason=args.reason)
    return _show(cli, made)


async def cmd_group(cli: Cli, args: argparse.Namespace) -> int:
    group = cli.settings.group_id
    if not args.yes:
        raise UsageError(
            f"`epigraph group delete` deletes everything in group {group!r} and cannot be undone: pass --yes "
            "(export it first with `epigraph export`)"
        )
    async with graph(cli, existing=True) as kg:
        held = await kg.delete_group()
    counts: dict[str, Any] = {"group_id": group, **asdict(held)}
    if cli.as_json:
        cli.print_json({"deleted": counts})
    else:
        cli.write(
            f"deleted group {group!r}: {held.episodes} episodes, {held.entities} entities, {held.facts} facts"
        )
    return 0
