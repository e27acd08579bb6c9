"""What every ``epigraph`` command gets, and how a command module registers its commands.

A command group is one module under ``epigraph/cli/`` with a ``register(command)`` function that adds
its subcommands through ``command(name, run, help)`` (which returns the subparser for its arguments);
``app.COMMANDS`` lists the groups. ``run`` is ``async (cli, args) -> exit code``.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from ..client import KnowledgeGraph
from ..config import Settings
from ..errors import ConfigError
from .output import Output

KGFactory = Callable[[Settings], KnowledgeGraph]

LLM_HELP = (
    "set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL (any OpenAI-compatible server) and/or "
    "EPIGRAPH_LLM_API_KEY (the OpenAI API)"
)


@dataclass
class Cli(Output):
    """What every command gets: the output, the settings, and how to build the graph from them."""

    settings: Settings
    factory: KGFactory


Run = Callable[[Cli, argparse.Namespace], Awaitable[int]]
"""A command: runs with the context and its parsed arguments, returns the exit code."""
AddCommand = Callable[[str, Run, str], argparse.ArgumentParser]
"""``command(name, run, help)``: adds a subcommand and returns its parser (for its own arguments)."""
Register = Callable[[AddCommand], None]
"""A command module's ``register``: adds its commands."""


@asynccontextmanager
async def graph(cli: Cli, *, existing: bool = False) -> AsyncIterator[KnowledgeGraph]:
    """The graph, closed at the end; opened lazily by its first call (a dry run never opens the store).

    ``existing``: the command reads (or changes) a graph that must already be there: a missing store
    file is :class:`~epigraph.errors.StoreNotFound` (exit 1), never a new empty graph.
    """
    settings = cli.settings.model_copy(update={"db_create": False}) if existing else cli.settings
    kg = cli.factory(settings)
    try:
        yield kg
    finally:
        await kg.close()


def require_llm(kg: KnowledgeGraph, command: str) -> None:
    if kg.llm is None:
        raise ConfigError(f"`epigraph {command}` needs an LLM: {LLM_HELP}")
