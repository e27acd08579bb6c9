"""``epigraph reveal`` and ``epigraph redact-key``: personal data redacted at the door (``--redact``,
``EPIGRAPH_REDACT=1``) read back, and the key that keeps the originals::

    epigraph redact-key                                  # a new key: export EPIGRAPH_REDACT_KEY=...
    epigraph reveal "call <PHONE_1>"                     # the text with the group's originals
    epigraph reveal --episode UUID                       # an episode's content
    epigraph search "+44 20 7946 0958" | epigraph reveal -   # anything on stdin

The key is read from ``EPIGRAPH_REDACT_KEY`` only (never an argument, which a shell history and ``ps``
would keep) and never printed or logged; a wrong key ends with exit code 1 (``VaultKeyError``), no key
with 2 (``ConfigError``); a group redacted without a key kept no originals: its placeholders stay.
"""

from __future__ import annotations

import argparse
import sys

from ..facade.group import reveal
from ..privacy.vault import new_key
from .context import AddCommand, Cli, graph


def register(command: AddCommand) -> None:
    p = command("reveal", cmd_reveal, "replace a text's placeholders (<PHONE_3>) by the originals the "
                "group's vault keeps (EPIGRAPH_REDACT_KEY)")  # fmt: skip
    chosen = p.add_mutually_exclusive_group(required=True)
    chosen.add_argument("text", nargs="?", metavar="TEXT", help="the text (-: read it from stdin)")
    chosen.add_argument("--episode", metavar="UUID", help="the content of this episode of the group")

    command("redact-key", cmd_redact_key, "print a new redaction key (for EPIGRAPH_REDACT_KEY)")


async def cmd_reveal(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        if args.episode is not None:
            text = (await kg.episodes.get(args.episode)).content
        else:
            text = sys.stdin.read() if args.text == "-" else args.text
        revealed = await reveal(kg, text)
    if cli.as_json:
        cli.print_json({"group_id": kg.group_id, "text": revealed})
    else:
        cli.write(revealed.rstrip("\n"))
    return 0


async def cmd_redact_key(cli: Cli, _: argparse.Namespace) -> int:
    key = new_key()
    if cli.as_json:
        cli.print_json({"key": key})
    else:
        cli.write(key)
        cli.note("set it as EPIGRAPH_REDACT_KEY (with --redact or EPIGRAPH_REDACT=1) before the group's "
                 "first redacted episode, and keep it: without it no original can be read back, and a "
                 "group redacted with it takes no other")  # fmt: skip
    return 0
