"""epigraph inside agent frameworks: one module per framework, each an optional extra.

- :mod:`epigraph.integrations.langchain` (``epigraph[langchain]``): ``EpigraphChatMessageHistory`` (a
  conversation's messages as episodes) and ``EpigraphRetriever`` (facts with their validity windows as
  ``Document``\\ s).
- :mod:`epigraph.integrations.langgraph` (``epigraph[langgraph]``): ``EpigraphStore``, LangGraph's
  long-term memory store (a namespace is a group, an item an episode).
- :mod:`epigraph.integrations.openai_agents` (``epigraph[openai-agents]``) and
  :mod:`epigraph.integrations.pydantic_ai` (``epigraph[pydantic-ai]``): the memory tools (remember,
  search, ask, correct) for an agent.

Each imports its framework only inside its own module; :mod:`.memory` (a graph and a group) and
:mod:`.tools` (the tools' behaviour and the text a model reads) are shared and need no framework.
"""

from .memory import GroupMemory
from .tools import MemoryTools

__all__ = ["GroupMemory", "MemoryTools"]
