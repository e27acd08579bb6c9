"""Ingestion options: every knob of the pipeline, with the reason for its default, grouped by the part of
the road it turns (``ContextOptions``, ``NameOptions``, ``FactOptions``, ``SummaryOptions``), so that a
profile (``small_model_options``) reads as one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from ..graph.model import utc_now
from ..privacy.policy import Redaction
from .names.matching import NameVeto, never_same
from .names.policy import GroundingPolicy
from .names.tagging import noun_phrases
from .names.things import ThingCheck
from .ontology import Ontology

Mode = Literal["separate", "combined", "bulk"]
FactLineFormat = Literal["brackets", "numbered"]
LINE_FORMATS: tuple[FactLineFormat, ...] = ("brackets", "numbered")

DEFAULT_IN_FLIGHT = 8
"""``IngestOptions.in_flight``'s default (chosen by measurement: its decision record,
docs/decisions/2026-12-02-episodes-in-flight.md)."""
SummaryMode = Literal["episode", "batch", "off"]

EXAMPLE_RELATION_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"LIVES_IN", "LIVED_IN", "RESIDES_IN", "MOVED_TO", "MOVED_FROM", "LOCATED_IN", "BASED_IN"}),
    frozenset({"WORKS_AT", "WORKS_FOR", "WORKED_AT", "EMPLOYED_BY", "JOINED", "LEFT", "HIRED_BY", "QUIT"}),
    frozenset({"MARRIED_TO", "DATING", "ENGAGED_TO", "DIVORCED_FROM", "PARTNER_OF", "BROKE_UP_WITH"}),
    frozenset({"STUDIES_AT", "STUDIED_AT", "ENROLLED_IN", "GRADUATED_FROM"}),
    frozenset({"OWNS", "OWNED", "SOLD", "BOUGHT"}),
)
"""An opt-in table of relations that can contradict each other across different targets, for
``IngestOptions(facts=FactOptions(relation_families=...))``. Not the default: candidates are found by meaning
(``facts.candidates``), because a model names relations freely and no table lists them all; a table only
makes sure the same-subject facts of a listed relation are shown first."""


@dataclass(frozen=True)
class ContextOptions:
    """What extraction is shown of the conversation before the episode (``pipeline.context``)."""

    tokens: int = 400
    """Token cap of the previous-episodes window sent to entity (or combined) extraction."""
    fact_tokens: int = 120
    """Smaller window for fact extraction: the entities are already resolved, only references remain."""
    episodes: int = 8
    """At most this many previous episodes are read before the token cap is applied."""


@dataclass(frozen=True)
class NameOptions:
    """The rules of the names room (``pipeline.names``): which extracted names are kept, what they are
    named, which stored entities they are compared with."""

    grounding: GroundingPolicy | None = field(default_factory=GroundingPolicy)
    """The hallucination check's word lists (``pipeline.names.policy``: synonyms, types that name no
    entity): replace them, empty them (the name's own words only), or None: no check, every extracted
    name kept."""
    things: ThingCheck | None = None
    """Names that are things (``pipeline.names.things``): an extracted name is kept only when it is the
    speaker or a noun phrase of its message (a speaker's possessive judged by what it owns), not a
    clause, a question, an adjective, a time expression or the reply's own wording; a name refused is
    counted in the report (``names_refused``). ``things.message_words()`` (word lists, no dependency)
    or ``tagging.noun_phrases()`` (spaCy's tagger, ``epigraph[local-model]``), or a check of your own.
    Off (None) by default: a larger model names things; ``small_model_options`` turns it on."""
    bare_names: bool = False
    """Bare names resolved without a model (``pipeline.names.bare``): a speaker's possessive the message
    does not give loses its owner ("Gina's business" for "your own business"), "the kids" a speaker
    says are the speaker's ("Melanie's kids"), a bare name is the speaker's own when the graph holds
    that ("business" -> "Jon's business"), and a bare one-word noun is the one longer name of the
    graph it heads ("group" -> "LGBTQ support group"). Off by default (the resolve call decides); on in
    ``small_model_options``, which makes no resolve call."""
    never_same: NameVeto | None = never_same
    """Name pairs never offered as duplicates whatever the vectors say (``names.matching.never_same``:
    different possessors, a possession and its possessor, a lone proper noun and a description mentioning
    it); a function of your own, or None: no veto."""
    max_candidates: int = 10
    """Stored entities an extracted name is compared with (and the resolve call shown)."""
    vector_threshold: float = 0.82
    """Name cosine at or above which a vector hit is a plausible duplicate (lexical rules catch the rest)."""
    related_threshold: float = 0.6
    """Name cosine at or above which a vector hit that shares a word (or a possessor) with the new name
    is a candidate too; the one resolve call per episode asks about all candidates at once."""


@dataclass(frozen=True)
class FactOptions:
    """The rules of the facts room (``pipeline.facts``): how a fact line is dated, which believed facts
    it is compared with, what decides whether it repeats or retires one."""

    dates_stated_only: bool = False
    """A fact line's date must agree with one its own message states (any time expression of it, or
    its present: the reference day); another is left unknown and reported (``dating.stated_dates``).
    On for the small local model, which copies the prompt's time words ("since 2019", "last Monday")
    into facts of messages that give no time. Off by default: a model shown earlier messages dates
    from them and infers ("5 years already!": five years ago), and the check would leave such right
    dates unknown (how many: docs/decisions/2026-11-26-ingestion-at-conversational-speed.md)."""
    sentences_from_message: bool = False
    """A fact's sentence is taken from its message: the clause naming both of the line's ends, the
    speaker's first person in the speaker's name (``prompts.said_clause``); the line's own sentence when
    no clause names both. Off, the small local model's options too: on its recorded replies it raised
    fact precision on LoCoMo 30 but cost fact recall by meaning on LoCoMo 26 (0.97 -> 0.83) and read
    no better (a clause that names the speaker twice; the figures:
    docs/decisions/2026-12-02-facts-a-person-can-read.md). ``python -m bench live --option
    facts.sentences_from_message=true`` measures it."""
    line_format: FactLineFormat = "brackets"
    """How the separate mode's fact call (extract_facts) writes a fact: ``brackets``, its two ends
    bracketed inside its sentence (``[Ann] started [pottery class] last Monday``:
    ``prompts.fact_lines``); ``numbered``, its two ends by their number in the list of names the call
    shows, then the fact as a free sentence (``1 2 | Ann started a pottery class last Monday``:
    ``prompts.numbered_lines``), so the model links and the sentence is not bent around two names; a
    numbered line's sentence must be grounded in the message as its names are (the ``grounded`` gate,
    ``facts.drafts``). Brackets by default until the local model's figures choose (``python -m bench
    live --option facts.line_format=numbered``); the combined and bulk modes always write brackets."""
    restated_similarity: float | None = None
    """Facts said again merged without a model (``pipeline.facts.restatements``): a new fact on the same
    two entities as an earlier fact of its episode, or as a believed candidate of the graph, whose
    sentence cosine reaches this is that fact said again (dropped, or its episode added as a source).
    None (the default): only word-for-word repeats merge without a model, the resolve call decides the
    rest; the local model's options set it (they make no resolve call)."""
    max_candidates: int = 10
    """Candidates shown per new fact: each shared endpoint's ``candidates_per_end`` closest in meaning,
    the facts on the same endpoint pair in the slots left (``facts.candidates.select``)."""
    candidates_per_end: int = 3
    """Candidates per shared endpoint (its facts not on the pair), so a busy endpoint (a person with 50
    facts) never takes the slots of a quiet one (an event with 3)."""
    similarity_floor: float = 0.3
    """Residual cosine (shared endpoints' names projected out) a candidate past the ``candidates_always``
    best of its endpoint needs: above unrelated facts of one person, below most updates (the figures on
    all-MiniLM-L6-v2: docs/decisions/2026-11-25-contradiction-candidates.md)."""
    candidates_always: int = 3
    """Of each shared endpoint's facts, the closest this many are shown whatever their score."""
    relation_families: tuple[frozenset[str], ...] = ()
    """Optional relation families (see ``EXAMPLE_RELATION_FAMILIES``); none by default."""
    resolve: bool = True
    """Ask resolve_episode about the episode's facts that have candidates, and its ambiguous names (the
    same call settles both). Off: no call; a name the deterministic rules did not match is new, and a
    fact is a duplicate only when it repeats a candidate's endpoints, relation and words
    (``facts.resolution.deterministic_duplicate``). The small local model's options turn it off: it
    answered ``new`` to nearly everything it was asked, plain restatements included, and the call was a
    large part of its time a message (docs/decisions/2026-11-26-ingestion-at-conversational-speed.md)."""
    batch: int = 6
    """New facts per resolve_episode call (each with its own candidate block); an episode with more
    facts to resolve makes further calls of facts only."""
    clip_chars: int = 600
    """Episode text sent to the resolve call is clipped to this many characters."""
    retire: bool = True
    """Apply the retirements resolve_episode's decisions ask for. The small local model's are noise
    (docs/decisions/2026-11-26-ingestion-at-conversational-speed.md), so its options turn it off
    (``small_model_options``): its graph keeps every fact current, none retired wrongly. Its
    restatements (a decision that ends a fact saying the same thing) still count as duplicates."""
    retire_all_guard: int = 0
    """When > 0: a resolve decision that retires EVERY candidate shown for a fact, when at least this
    many were shown, retires none (reported; ``pipeline.facts.retirements``). The small local model
    answers so where nothing was contradicted; a strong model rarely does, and rightly when a plan done
    ends every step of it, so 0 (off) by default and 3 for the local model (``small_model_options``;
    docs/decisions/2026-11-25-contradiction-candidates.md)."""

    def __post_init__(self) -> None:
        if self.line_format not in LINE_FORMATS:
            raise ValueError(
                f"FactOptions.line_format must be one of {', '.join(LINE_FORMATS)}, not {self.line_format!r}"
            )


@dataclass(frozen=True)
class SummaryOptions:
    """Entity summaries (``pipeline.summaries``): when the model writes them, and how big they get."""

    mode: SummaryMode = "episode"
    """``episode``: at most one summarize call per episode; ``batch``: one per group at the end of
    ``add_episodes`` / ``ingest`` (entities get composed summaries in between; ``add_episode`` alone
    then leaves composed summaries until the entity's next model summary); ``off``: composed only.
    ``add_episodes`` and ``ingest`` use ``batch`` unless told otherwise."""
    compose_max: int = 4
    """An entity with at most this many current facts gets its facts joined as the summary, no model."""
    facts_max: int = 15
    """The newest facts of an entity the summarize call is shown."""
    batch: int = 20
    """Entities per summarize call."""


@dataclass(frozen=True)
class RecordOptions:
    """The decision record stored with each episode (``graph.decisions``: what each stage decided, read
    by ``kg.explain``)."""

    keep: bool = True
    """Store a record with each episode (off: none, and ``explain`` says only what the graph holds)."""
    texts: bool = False
    """Keep the reply's fact lines verbatim in the record too (their ends, relation, sentence and
    attributes as the model wrote them); off, a record holds names and sentences only."""
    days: float | None = None
    """Retention: each episode's write deletes its group's records older than this (``None``: kept as
    long as their episodes; ``EPIGRAPH_DECISIONS_DAYS``)."""


@dataclass(frozen=True)
class IngestOptions:
    """How episodes are ingested: the extraction mode, and a group of options for each part of the road
    (the window of earlier episodes, the names room, the facts room, the summaries). The defaults meet
    the cost budget in ``bench/performance/ingest.py``.

    ::

        IngestOptions(mode="combined", summaries=SummaryOptions(mode="batch"))
        IngestOptions(facts=FactOptions(retire=False), names=NameOptions(grounding=None))
        replace(options, facts=replace(options.facts, resolve=False))    # one option of a group changed
    """

    mode: Mode = "separate"
    """``separate``: extract_entities then extract_facts (parallel with entity resolution);
    ``combined``: one extract_combined call (cheaper; compare with the bench); ``bulk``: for a batch
    (``add_episodes``, ``ingest``), one extract_window call per ``window`` consecutive turns of a group,
    each turn then resolved and written on its own (``pipeline.bulk``); a single episode runs combined."""
    window: int = 6
    """Turns per extract_window call in ``bulk`` mode (one model call for several turns; not
    ``in_flight``, which runs each turn's own calls ahead)."""
    in_flight: int = DEFAULT_IN_FLIGHT
    """Episodes of one group in flight at once (``ingestion.lookahead``): the model calls of up to this
    many of a group's next episodes run ahead, concurrently, while each episode is still committed
    strictly in order, computed again at its commit against the graph as its predecessors left it (the
    calls ahead whose requests come again are answered from what they got, the others made then), so the
    graph is the one of one episode at a time. 1: one at a time, nothing ahead. Not in ``bulk`` mode.
    Bounded by the model client's own limiter (concurrency, RPM, TPM) like every call; calls ahead a
    commit did not use are counted in its report (``calls_ahead_unused``). The default and its figures:
    docs/decisions/2026-12-02-episodes-in-flight.md."""
    ontology: Ontology = field(default_factory=Ontology)
    """The declared entity and relation types (none by default: any)."""
    context: ContextOptions = field(default_factory=ContextOptions)
    names: NameOptions = field(default_factory=NameOptions)
    facts: FactOptions = field(default_factory=FactOptions)
    summaries: SummaryOptions = field(default_factory=SummaryOptions)
    record: RecordOptions = field(default_factory=RecordOptions)
    clock: Callable[[], datetime] = utc_now
    """System time (created_at / expired_at); injectable for reproducible tests."""
    redact: bool | Redaction = False
    """Personal data replaced at the door (``epigraph.privacy``), before an episode is stored or shown
    to a model: ``True`` replaces emails, phone numbers, payment cards (Luhn), IBANs (mod-97), IP
    addresses and API keys by a placeholder per value and group (``<PHONE_3>``: the same number is the
    same placeholder in every episode of the group, so its facts still join); a ``Redaction`` chooses
    the kinds and person names (spaCy's tagger). The originals are dropped, or kept sealed by the
    caller's key (``EPIGRAPH_REDACT_KEY``), readable only with it (``epigraph.reveal``). Off by default
    (``EPIGRAPH_REDACT=1`` / ``--redact`` turn it on); the figures:
    docs/decisions/2026-12-01-personal-data.md."""

    def __post_init__(self) -> None:
        if isinstance(self.in_flight, bool) or not isinstance(self.in_flight, int) or self.in_flight < 1:
            raise ValueError(f"IngestOptions.in_flight must be a whole number >= 1, not {self.in_flight!r}")


def with_retention(options: IngestOptions, days: float | None) -> IngestOptions:
    """``options`` keeping decision records ``days`` (``EPIGRAPH_DECISIONS_DAYS``) unless they say so
    themselves (``RecordOptions.days``)."""
    if days is None or options.record.days is not None:
        return options
    return replace(options, record=replace(options.record, days=days))


SMALL_MODEL_RETIRE_ALL_GUARD = 3
SMALL_MODEL_RESTATED_SIMILARITY = 0.8
"""MiniLM cosine at which the local model's fact is a restatement (measured: docs/decisions/
2026-11-28-names-that-are-things.md)."""


def small_model_options() -> IngestOptions:
    """The options the small local model ingests with unless the caller chooses its own (chosen with
    ``bench/quality/live.py``; the figures: docs/decisions/2026-11-26-ingestion-at-conversational-speed.md):

    - no previous-episodes window (``context``): shown earlier messages, it wrote their facts again under
      the current speaker;
    - names (``names``): only those that are noun phrases of the message (``things``: spaCy's tagger,
      ``pipeline.names.tagging``): it named clauses, questions, adjectives and times; and bare names
      resolved (``bare_names``): it named "kids" for Melanie's kids and "group" for the support group
      named a turn before, and nothing else merges them without a resolve call;
    - facts (``facts``): only dates its message states (``dates_stated_only``: it copied the prompt's
      time words); facts said again merged by meaning (``restated_similarity``: with no resolve call,
      it wrote each restatement as one more fact); candidates only by meaning (``candidates_always=0``:
      each fact it is shown is one more chance to retire something unrelated, and a fact with no close
      candidate needs no resolve call); no resolve_episode call (``resolve=False``: it answered ``new``
      to every name and fact it was asked about, duplicates included, and the call was a large part of
      its time); no retirements from its decisions (``retire=False``: they are noise, see that option),
      its blanket ones refused too when a caller turns them back on (``retire_all_guard``);
    - one episode of a group at a time (``in_flight=1``): its server runs one request at a time on this
      machine's cores (``EPIGRAPH_LOCAL_MODEL_SLOTS`` 1), so calls ahead would only queue behind the
      commit's (not measured on the local model; turn it on with ``replace(o, in_flight=4)``).

    Change one option with ``dataclasses.replace`` (``replace(o, facts=replace(o.facts, retire=True))``).
    """
    return IngestOptions(
        in_flight=1,
        context=ContextOptions(tokens=0, fact_tokens=0),
        names=NameOptions(things=noun_phrases(), bare_names=True),
        facts=FactOptions(
            dates_stated_only=True,
            restated_similarity=SMALL_MODEL_RESTATED_SIMILARITY,
            candidates_always=0,
            resolve=False,
            retire=False,
            retire_all_guard=SMALL_MODEL_RETIRE_ALL_GUARD,
        ),
    )


def for_small_model(options: IngestOptions | None = None) -> IngestOptions:
    """The options to ingest with on the small local model: ``small_model_options()`` when the caller
    chose none, else the caller's with its blanket retirements refused (``facts.retire_all_guard`` 3,
    unless the caller set one)."""
    if options is None:
        return small_model_options()
    if options.facts.retire_all_guard:
        return options
    return replace(options, facts=replace(options.facts, retire_all_guard=SMALL_MODEL_RETIRE_ALL_GUARD))
