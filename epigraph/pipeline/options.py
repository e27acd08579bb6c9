"""Ingestion options: every knob of the pipeline, with the reason for its default."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from ..graph.model import utc_now
from .name_matching import NameVeto, never_same
from .ontology import Ontology
from .policy import GroundingPolicy
from .tagging import noun_phrases
from .things import ThingCheck

Mode = Literal["separate", "combined", "bulk"]
SummaryMode = Literal["episode", "batch", "off"]

EXAMPLE_RELATION_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"LIVES_IN", "LIVED_IN", "RESIDES_IN", "MOVED_TO", "MOVED_FROM", "LOCATED_IN", "BASED_IN"}),
    frozenset({"WORKS_AT", "WORKS_FOR", "WORKED_AT", "EMPLOYED_BY", "JOINED", "LEFT", "HIRED_BY", "QUIT"}),
    frozenset({"MARRIED_TO", "DATING", "ENGAGED_TO", "DIVORCED_FROM", "PARTNER_OF", "BROKE_UP_WITH"}),
    frozenset({"STUDIES_AT", "STUDIED_AT", "ENROLLED_IN", "GRADUATED_FROM"}),
    frozenset({"OWNS", "OWNED", "SOLD", "BOUGHT"}),
)
"""An opt-in table of relations that can contradict each other across different targets, for
``IngestOptions(relation_families=...)``. Not the default: candidates are found by meaning
(``fact_candidates``), because a model names relations freely and no table lists them all; a table only
makes sure the same-subject facts of a listed relation are shown first."""


@dataclass(frozen=True)
class IngestOptions:
    """How episodes are ingested. The defaults meet the cost budget in ``bench/performance/ingest.py``."""

    mode: Mode = "separate"
    """``separate``: extract_entities then extract_facts (parallel with entity resolution);
    ``combined``: one extract_combined call (cheaper; compare with the bench); ``bulk``: for a batch
    (``add_episodes``, ``ingest``), one extract_window call per ``window`` consecutive turns of a group,
    each turn then resolved and written on its own (``pipeline.bulk``); a single episode runs combined."""
    window: int = 6
    """Turns per extract_window call in ``bulk`` mode."""
    ontology: Ontology = field(default_factory=Ontology)
    context_tokens: int = 400
    """Token cap of the previous-episodes window sent to entity (or combined) extraction."""
    fact_context_tokens: int = 120
    """Smaller window for fact extraction: the entities are already resolved, only references remain."""
    context_episodes: int = 8
    """At most this many previous episodes are read before the token cap is applied."""
    clip_chars: int = 600
    """Episode text sent to resolution prompts is clipped to this many characters."""
    max_entity_candidates: int = 10
    max_fact_candidates: int = 10
    """Candidates shown per new fact: each shared endpoint's ``fact_candidates_per_end`` closest in
    meaning, the facts on the same endpoint pair in the slots left (``fact_candidates.select``)."""
    fact_candidates_per_end: int = 3
    """Candidates per shared endpoint (its facts not on the pair), so a busy endpoint (a person with 50
    facts) never takes the slots of a quiet one (an event with 3)."""
    fact_similarity_floor: float = 0.3
    """Residual cosine (shared endpoints' names projected out) a candidate past the ``always`` best of
    its endpoint needs: above unrelated facts of one person, below most updates (the figures on
    all-MiniLM-L6-v2: docs/decisions/2026-11-25-contradiction-candidates.md)."""
    fact_candidates_always: int = 3
    """Of each shared endpoint's facts, the closest this many are shown whatever their score."""
    retire_all_guard: int = 0
    """When > 0: a resolve decision that retires EVERY candidate shown for a fact, when at least this
    many were shown, retires none (reported; ``pipeline.retirements``). The small local model answers so
    where nothing was contradicted; a strong model rarely does, and rightly when a plan done ends every
    step of it, so 0 (off) by default and 3 for the local model (``small_model_options``;
    docs/decisions/2026-11-25-contradiction-candidates.md)."""
    retire: bool = True
    """Apply the retirements resolve_episode's decisions ask for. The small local model's are noise
    (docs/decisions/2026-11-26-ingestion-at-conversational-speed.md), so its options turn it off
    (``small_model_options``): its graph keeps every fact current, none retired wrongly. Its
    restatements (a decision that ends a fact saying the same thing) still count as duplicates."""
    resolve: bool = True
    """Ask resolve_episode about the episode's ambiguous names and its facts that have candidates. Off:
    no call; a name the deterministic rules did not match is new, and a fact is a duplicate only when it
    repeats a candidate's endpoints, relation and words (``fact_resolution.deterministic_duplicate``).
    The small local model's options turn it off: it answered ``new`` to nearly everything it was asked,
    plain restatements included, and the call was a large part of its time a message
    (the figures: docs/decisions/2026-11-26-ingestion-at-conversational-speed.md)."""
    restated_similarity: float | None = None
    """Facts said again merged without a model (``pipeline.restatements``): a new fact on the same two
    entities as an earlier fact of its episode, or as a believed candidate of the graph, whose sentence
    cosine reaches this is that fact said again (dropped, or its episode added as a source). None (the
    default): only word-for-word repeats merge without a model, the resolve call decides the rest; the
    local model's options set it (they make no resolve call)."""
    dates_stated_only: bool = False
    """A fact line's date must agree with one its own message states (any time expression of it, or
    its present: the reference day); another is left unknown and reported (``dating.stated_dates``).
    On for the small local model, which copies the prompt's time words ("since 2019", "last Monday")
    into facts of messages that give no time. Off by default: a model shown earlier messages dates
    from them ("the stories" of the support group it went to "yesterday", a turn before) and infers
    ("5 years already!": five years ago), and the check would leave such right dates unknown (how many:
    docs/decisions/2026-11-26-ingestion-at-conversational-speed.md)."""
    fact_batch: int = 6
    """New facts per resolve_episode call (each with its own candidate block); an episode with more
    facts to resolve makes further calls of facts only."""
    vector_threshold: float = 0.82
    """Name cosine at or above which a vector hit is a plausible duplicate (lexical rules catch the rest)."""
    related_name_threshold: float = 0.6
    """Name cosine at or above which a vector hit that shares a word (or a possessor) with the new name
    is a candidate too; the one resolve call per episode asks about all candidates at once."""
    summary_mode: SummaryMode = "episode"
    """``episode``: at most one summarize call per episode; ``batch``: one per group at the end of
    ``add_episodes`` / ``ingest`` (entities get composed summaries in between; ``add_episode`` alone
    then leaves composed summaries until the entity's next model summary); ``off``: composed only.
    ``add_episodes`` and ``ingest`` use ``batch`` unless told otherwise."""
    summary_compose_max: int = 4
    """An entity with at most this many current facts gets its facts joined as the summary, no model."""
    summary_facts_max: int = 15
    summary_batch: int = 20
    """Entities per summarize call."""
    relation_families: tuple[frozenset[str], ...] = ()
    """Optional relation families (see ``EXAMPLE_RELATION_FAMILIES``); none by default."""
    clock: Callable[[], datetime] = utc_now
    """System time (created_at / expired_at); injectable for reproducible tests."""
    grounding: GroundingPolicy | None = field(default_factory=GroundingPolicy)
    """The hallucination check's word lists (``pipeline.policy``: synonyms, types that name no entity):
    replace them, empty them (the name's own words only), or None: no check, every extracted name kept."""
    things: ThingCheck | None = None
    """Names that are things (``pipeline.things``): an extracted name is kept only when it is the
    speaker or a noun phrase of its message (a speaker's possessive judged by what it owns), not a
    clause, a question, an adjective, a time expression or the reply's own wording; a name refused is
    counted in the report (``names_refused``). ``things.message_words()`` (word lists, no dependency)
    or ``tagging.noun_phrases()`` (spaCy's tagger, ``epigraph[local-model]``), or a check of your own.
    Off (None) by default: a larger model names things; ``small_model_options`` turns it on."""
    bare_names: bool = False
    """Bare names resolved without a model (``pipeline.bare_names``): a speaker's possessive the message
    does not give loses its owner ("Gina's business" for "your own business"), "the kids" a speaker
    says are the speaker's ("Melanie's kids"), a bare name is the speaker's own when the graph holds
    that ("business" -> "Jon's business"), and a bare one-word noun is the one longer name of the
    graph it heads ("group" -> "LGBTQ support group"). Off by default (the resolve call decides); on in
    ``small_model_options``, which makes no resolve call."""
    never_same: NameVeto | None = never_same
    """Name pairs never offered as duplicates whatever the vectors say (``name_matching.never_same``:
    different possessors, a possession and its possessor, a lone proper noun and a description mentioning
    it); a function of your own, or None: no veto."""


SMALL_MODEL_RETIRE_ALL_GUARD = 3
SMALL_MODEL_RESTATED_SIMILARITY = 0.8
"""MiniLM cosine at which the local model's fact is a restatement (measured: docs/decisions/
2026-11-28-names-that-are-things.md)."""


def small_model_options(**changes: object) -> IngestOptions:
    """The options the small local model ingests with unless the caller chooses its own (chosen with
    ``bench/quality/live.py``; the figures: docs/decisions/2026-11-26-ingestion-at-conversational-speed.md):

    - no previous-episodes window (``context_tokens=0``): shown earlier messages, it wrote their facts
      again under the current speaker;
    - candidates only by meaning (``fact_candidates_always=0``): each fact it is shown is one more
      chance to retire something unrelated, and a fact with no close candidate needs no resolve call;
    - no retirements from its decisions (``retire=False``: they are noise, see that option); its
      blanket ones are refused too when a caller turns them back on (``retire_all_guard``);
    - no resolve_episode call (``resolve=False``): it answered ``new`` to every name and fact it was
      asked about, duplicates included, and the call was a large part of its time;
    - only dates its message states (``dates_stated_only``): it copied the prompt's time words;
    - only names that are noun phrases of the message (``things``: spaCy's tagger, ``pipeline.tagging``):
      it named clauses, questions, adjectives and times;
    - facts said again merged by meaning (``restated_similarity``): with no resolve call, it wrote
      each restatement as one more fact;
    - bare names resolved (``bare_names``): it named "kids" for Melanie's kids and "group" for the
      support group named a turn before, and nothing else merges them without a resolve call.
    """
    chosen = IngestOptions(
        context_tokens=0,
        fact_context_tokens=0,
        fact_candidates_always=0,
        retire=False,
        resolve=False,
        dates_stated_only=True,
        retire_all_guard=SMALL_MODEL_RETIRE_ALL_GUARD,
        things=noun_phrases(),
        restated_similarity=SMALL_MODEL_RESTATED_SIMILARITY,
        bare_names=True,
    )
    return replace(chosen, **changes)  # type: ignore[arg-type]


def for_small_model(options: IngestOptions | None = None) -> IngestOptions:
    """The options to ingest with on the small local model: ``small_model_options()`` when the caller
    chose none, else the caller's with its blanket retirements refused (``retire_all_guard`` 3, unless
    the caller set one)."""
    if options is None:
        return small_model_options()
    if options.retire_all_guard:
        return options
    return replace(options, retire_all_guard=SMALL_MODEL_RETIRE_ALL_GUARD)
