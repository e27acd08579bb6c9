"""``epigraph serve`` (the HTTP API) and ``epigraph mcp`` (the MCP server): both need ``epigraph[serve]``,
imported only when one of them runs."""

from __future__ import annotations

import argparse

from . import to_kafka
from .context import AddCommand, Cli
from .inputs import positive_arg


def register(command: AddCommand) -> None:
    p = command("serve", cmd_serve, "serve the graph over HTTP (epigraph[serve]): /v1 API, OpenAPI at /docs")
    p.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1; others need API keys)")
    p.add_argument("--port", type=positive_arg, default=8000, help="port (default 8000)")
    p.add_argument("--groups-file", metavar="PATH", help="where the groups to resume are recorded "
                   "(default: <db>.groups)")  # fmt: skip
    to_kafka.add_options(p)
    p = command("mcp", cmd_mcp, "serve the graph to MCP hosts (epigraph[serve]): stdio or streamable HTTP")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: address (default 127.0.0.1)")
    p.add_argument("--port", type=positive_arg, default=8001, help="http: port (default 8001; path /mcp)")
    p.add_argument("--groups-file", metavar="PATH", help="where the groups to resume are recorded")


async def cmd_serve(cli: Cli, args: argparse.Namespace) -> int:
    from ..serve.main import serve

    settings = to_kafka.settings(cli.settings, args)
    return await serve(settings, args.host, args.port, args.groups_file, publish=bool(args.to_kafka))


async def cmd_mcp(cli: Cli, args: argparse.Namespace) -> int:
    from ..serve.main import mcp

    return await mcp(cli.settings, args.transport, args.host, args.port, args.groups_file)
