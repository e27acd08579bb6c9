"""The memory tools for the OpenAI Agents SDK (``pip install 'epigraph[openai-agents]'``, module
``agents``).

:func:`memory_tools` gives ``remember``, ``search``, ``ask`` and ``correct`` as ``FunctionTool``\\ s
(built by the SDK's ``function_tool`` from :class:`~epigraph.integrations.tools.MemoryTools`: their
descriptions and parameters come from its docstrings), bound to one graph and group::

    async with KnowledgeGraph() as kg:
        agent = Agent(name="assistant", instructions="...", tools=memory_tools(kg, "alice"))
        result = await Runner.run(agent, "I moved to Lisbon in February.")

A call the model can put right (an unknown fact id, a date it cannot read) is answered with the reason,
``error: ...``, for the model to read; any other failure (the store, the graph's own language model)
ends the run with its exception.
"""

from __future__ import annotations

from agents import FunctionTool, function_tool

from ..client import KnowledgeGraph
from .memory import AGENT_AUTHOR, GroupMemory
from .tools import MemoryTools, guarded


def explained(error: Exception) -> str:
    """What the model reads when its call was wrong."""
    return f"error: {error}"


def memory_tools(
    kg: KnowledgeGraph,
    group_id: str,
    *,
    author: str = AGENT_AUTHOR,
    speaker: str | None = None,
    limit: int = 10,
) -> list[FunctionTool]:
    """The four memory tools over ``kg``'s group ``group_id``. ``author``: whom corrections are recorded
    as; ``speaker``: who remembered notes are attributed to (None: plain text); ``limit``: facts a
    search returns."""
    tools = MemoryTools(GroupMemory(kg, group_id, author), limit=limit, speaker=speaker)
    return [function_tool(guarded(t, explained), failure_error_function=None) for t in tools.tools]
