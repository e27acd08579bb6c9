"""The memory tools for pydantic-ai (``pip install 'epigraph[pydantic-ai]'``).

:func:`memory_toolset` gives ``remember``, ``search``, ``ask`` and ``correct`` as a ``FunctionToolset``
(pydantic-ai reads their descriptions and parameters from the docstrings of
:class:`~epigraph.integrations.tools.MemoryTools`), bound to one graph and group::

    async with KnowledgeGraph() as kg:
        agent = Agent("openai:gpt-4o-mini", toolsets=[memory_toolset(kg, "alice")])
        result = await agent.run("I moved to Lisbon in February.")

A call the model can put right (an unknown fact id, a date it cannot read) raises ``ModelRetry`` with
the reason, so the model reads it and tries again (up to the toolset's ``max_retries``); any other
failure (the store, the graph's own language model) ends the run with its exception.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import ModelRetry
from pydantic_ai.toolsets import FunctionToolset

from ..client import KnowledgeGraph
from .memory import AGENT_AUTHOR, GroupMemory
from .tools import MemoryTools, guarded


def retry(error: Exception) -> str:
    """Ask the model to try again, telling it why."""
    raise ModelRetry(str(error)) from error


def memory_toolset(
    kg: KnowledgeGraph,
    group_id: str,
    *,
    author: str = AGENT_AUTHOR,
    speaker: str | None = None,
    limit: int = 10,
    max_retries: int | None = None,
) -> FunctionToolset[Any]:
    """The four memory tools over ``kg``'s group ``group_id``. ``author``: whom corrections are recorded
    as; ``speaker``: who remembered notes are attributed to (None: plain text); ``limit``: facts a
    search returns; ``max_retries``: retries of a call the model got wrong (None: the agent's)."""
    tools = MemoryTools(GroupMemory(kg, group_id, author), limit=limit, speaker=speaker)
    return FunctionToolset([guarded(t, retry) for t in tools.tools], max_retries=max_retries)
