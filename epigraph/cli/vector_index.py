"""``index``: build the embedded store's approximate vector indexes of a group and save them next to the
database (``<db>.ann/``, graph/embedded/ann_file.py). Run once after a large import: every later
command, and the server, then searches through them from its first search, where each would otherwise
start a build of its own (minutes at a million facts) and search exactly meanwhile."""

from __future__ import annotations

import argparse
import time

from ..client import prepare_vectors
from .context import AddCommand, Cli, graph


def register(command: AddCommand) -> None:
    command("index", cmd_index, "build and save the group's approximate vector indexes (embedded store)")


async def cmd_index(cli: Cli, args: argparse.Namespace) -> int:
    started = time.perf_counter()
    async with graph(cli, existing=True) as kg:
        ready = await prepare_vectors(kg)
    seconds = time.perf_counter() - started
    if ready is None:
        note = "Neo4j keeps its own vector index: nothing to build"
    elif ready:
        note = f"saved in {cli.settings.db_path}.ann"
    else:
        note = (
            f"no kind of vector has {cli.settings.exact_below:,} rows in this group, or usearch is not "
            "installed (epigraph[ann]): searched exactly"
        )
    if cli.as_json:
        cli.print_json(
            {"group_id": kg.group_id, "indexes_ready": ready, "seconds": round(seconds, 3), "note": note}
        )
    else:
        count = str(ready) if ready else "no"
        cli.note(f"{count} vector index(es) ready for group {kg.group_id!r} in {seconds:.1f} s; {note}")
    return 0
