"""The big picture of a graph: communities of entities and the running summaries of conversations.

Both are derived records (``graph.derived``), computed from the graph through the store's optional
derived-view roles (``graph.store.OverviewStore``) and kept beside it: :class:`Communities` (clusters
of the current facts, named and summarized by the model, updated incrementally, viewed as of any time)
and :class:`Conversations` (chains of episodes by source, each with a running summary folded from its
new episodes only).
"""

from .communities import Communities, CommunityUpdate, CommunityView
from .conversations import ChainView, Conversation, Conversations, ConversationUpdate
from .options import OverviewOptions
from .upkeep import OverviewUpdated, Upkeep

__all__ = [
    "ChainView",
    "Communities",
    "CommunityUpdate",
    "CommunityView",
    "Conversation",
    "ConversationUpdate",
    "Conversations",
    "OverviewOptions",
    "OverviewUpdated",
    "Upkeep",
]
