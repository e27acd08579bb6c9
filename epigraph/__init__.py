"""epigraph: temporal knowledge graphs from chat episodes and documents.

Start with :class:`KnowledgeGraph` (an async context manager)::

    from epigraph import KnowledgeGraph
    async with KnowledgeGraph() as kg:          # ./epigraph.db; LLM and store from EPIGRAPH_* variables
        result = await kg.add_episode("Alice: I moved to Lisbon", reference_time=when)
        print(await kg.entity("Alice"))
        await kg.group("bob").search("where does Bob work?")   # another group: a GroupHandle

The Protocols you implement to bring your own parts are here too: :class:`GraphStore` (a store),
:class:`LLM` (a chat model) and :class:`Embedder` (``KnowledgeGraph(store=..., llm=..., embedder=...)``).
:class:`GraphStore` is the core every store implements (25 methods: :class:`EpisodeLog`,
:class:`GraphLookups`, :class:`GraphSearch`, ``setup``, ``close``): ingestion, search, ``ask`` and the
entity view need nothing else. A store may add optional roles: :class:`DerivedViews` (:class:`ViewReads`,
:class:`ViewUpkeep`: communities and conversation summaries, kept after each batch), :class:`CorrectionLog`
(:class:`CorrectionReads`, :class:`CorrectionWrites`: corrections by hand), :class:`ChangeReads` (what
changed in a time window: ``kg.changes``), :class:`DecisionReads` (the decision records episodes were
written with: ``kg.explain``), :class:`WholeGroups` (export, load, stats, ``delete_group``),
:class:`BulkWrites`, :class:`Forgetting` (``forget``, its audit records), :class:`Retention` (the
groups' retention policies) and :class:`RedactionVault` (the placeholders of personal data redacted at
the door: ``IngestOptions(redact=True)``, :class:`Redaction`); a feature whose role the store has not
got raises :class:`StoreRoleMissing` naming the feature, the role and the methods missing.

Importing this package runs nothing: no model is loaded and no connection is made until first use.
"""

from .ask import Answer, AskChunk, AskOptions, AskUsage, Citation
from .client import KnowledgeGraph
from .config import Settings
from .embed import Embedder
from .episodes.events import EpisodeResult, ProgressEvent
from .episodes.inputs import EpisodeInput
from .errors import (
    AmbiguousName,
    ConfigError,
    ConflictError,
    ConversationNotFound,
    EntityNotFound,
    EpigraphError,
    EpisodeConflict,
    EpisodeNotFound,
    GroupNotFound,
    InputError,
    LLMError,
    NotFound,
    QueueError,
    RetentionNotSet,
    StoreError,
    StoreRoleMissing,
    StructuredOutputError,
    UsageError,
    VaultKeyError,
)
from .facade.group import GroupHandle, explain, reveal
from .forget import ForgetResult
from .graph.derived import Community, ConversationSummary
from .graph.forgetting import ForgetRecord, RetentionPolicy
from .graph.model import Entity, Episode, EpisodeKind, EpisodeStatus, Fact, IngestReport, Mention
from .graph.store import (
    CorrectionLog,
    CorrectionReads,
    CorrectionWrites,
    DerivedViews,
    EpisodeLog,
    ForgetStore,
    GraphLookups,
    GraphReads,
    GraphSearch,
    GraphStore,
    ViewReads,
    ViewUpkeep,
)
from .graph.store_roles import (
    BulkWrites,
    ChangeReads,
    DecisionReads,
    Forgetting,
    RedactionVault,
    Retention,
    WholeGroups,
)
from .overview import OverviewOptions
from .pipeline.names.policy import GroundingPolicy
from .pipeline.ontology import Ontology
from .pipeline.options import (
    ContextOptions,
    FactOptions,
    IngestOptions,
    NameOptions,
    RecordOptions,
    SummaryOptions,
)
from .privacy.policy import Redaction
from .prompts.protocol import LLM
from .search import RECIPES, EntityView, SearchConfig, SearchResults
from .version import __version__

__all__ = [
    "LLM",
    "RECIPES",
    "AmbiguousName",
    "Answer",
    "AskChunk",
    "AskOptions",
    "AskUsage",
    "BulkWrites",
    "ChangeReads",
    "Citation",
    "Community",
    "ConfigError",
    "ConflictError",
    "ContextOptions",
    "ConversationNotFound",
    "ConversationSummary",
    "CorrectionLog",
    "CorrectionReads",
    "CorrectionWrites",
    "DecisionReads",
    "DerivedViews",
    "Embedder",
    "Entity",
    "EntityNotFound",
    "EntityView",
    "EpigraphError",
    "Episode",
    "EpisodeConflict",
    "EpisodeInput",
    "EpisodeKind",
    "EpisodeLog",
    "EpisodeNotFound",
    "EpisodeResult",
    "EpisodeStatus",
    "Fact",
    "FactOptions",
    "ForgetRecord",
    "ForgetResult",
    "ForgetStore",
    "Forgetting",
    "GraphLookups",
    "GraphReads",
    "GraphSearch",
    "GraphStore",
    "GroundingPolicy",
    "GroupHandle",
    "GroupNotFound",
    "IngestOptions",
    "IngestReport",
    "InputError",
    "KnowledgeGraph",
    "LLMError",
    "Mention",
    "NameOptions",
    "NotFound",
    "Ontology",
    "OverviewOptions",
    "ProgressEvent",
    "QueueError",
    "RecordOptions",
    "Redaction",
    "RedactionVault",
    "Retention",
    "RetentionNotSet",
    "RetentionPolicy",
    "SearchConfig",
    "SearchResults",
    "Settings",
    "StoreError",
    "StoreRoleMissing",
    "StructuredOutputError",
    "SummaryOptions",
    "UsageError",
    "VaultKeyError",
    "ViewReads",
    "ViewUpkeep",
    "WholeGroups",
    "__version__",
    "explain",
    "reveal",
]
