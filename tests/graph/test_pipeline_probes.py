"""Adversarial probes of contradiction candidates, on both stores, with the real embedder (issue 18).

Each probe ingests a person's background facts, then the fact that updates (or restates, or must not
touch) one of them, through the real pipeline with a scripted model that answers as a careful model
would, and checks two things apart: was the right earlier fact *shown* to the model (candidate recall,
which is the pipeline's job: scope plus ranking by meaning with all-MiniLM-L6-v2), and did the graph end
right. Relation names differ on purpose (LIVES_IN / RESIDES_IN / MOVED_TO / IS_BASED_IN): no relation
table is involved. The two-people probe uses a model that retires every candidate it is shown, so only
the structural scope can protect the other person's fact.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from epigraph.embed import SentenceTransformerEmbedder
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.model import Fact
from epigraph.graph.store import EVERYTHING, FactFilter, GraphStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.options import IngestOptions
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.fact_lines import write_fact
from epigraph.prompts.protocol import ChatRequest
from epigraph.prompts.resolve_episode import verdict_line
from epigraph.testing import ScriptedLLM

pytestmark = pytest.mark.slow

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
Line = tuple[str, str, str, str]
"""(source, target, relation, sentence)"""

BACKGROUND: list[Line] = [
    ("Alice", "painting", "ENJOYS", "Alice enjoys painting landscapes on weekends."),
    ("Alice", "Rex", "HAS_PET", "Alice has a golden retriever named Rex."),
    ("Alice", "food bank", "VOLUNTEERS_AT", "Alice volunteers at the food bank on Saturdays."),
    ("Alice", "mystery novels", "READS", "Alice reads mystery novels before bed."),
    ("Alice", "Bob", "FRIENDS_WITH", "Alice has been friends with Bob since college."),
    ("Alice", "guitar", "PLAYS", "Alice plays the guitar in a small band."),
]


def episode_of(v: Any) -> str:
    return ExtractionInput.model_validate(v).content()


@dataclass
class Script:
    """A careful model: extraction from the declared lines; resolve_fact answers ``retires`` /
    ``restates`` (sentence -> earlier sentences) among what it was shown, and records what it saw."""

    lines: dict[str, list[Line]]
    retires: Mapping[str, Sequence[str]] = field(default_factory=dict)
    restates: Mapping[str, Sequence[str]] = field(default_factory=dict)
    retire_everything: bool = False
    shown: dict[str, list[str]] = field(default_factory=dict)

    def __call__(self, request: ChatRequest) -> str:
        answer: Callable[[Any], str] = getattr(self, request.prompt_name)
        return answer(request.variables)

    def extract_entities(self, v: Any) -> str:
        names = dict.fromkeys(n for s, t, _, _ in self.lines[episode_of(v)] for n in (s, t))
        return "; ".join(names)

    def extract_facts(self, v: Any) -> str:
        return "\n".join(write_fact(sentence, s, t, rel) for s, t, rel, sentence in self.lines[episode_of(v)])

    def resolve_episode(self, v: Any) -> str:
        lines = [f"{q['id']} new" for q in v["entities"]]
        for item in v["facts"]:
            offered = {c["fact"]: c["id"] for c in item["candidates"]}
            self.shown.setdefault(item["fact"], []).extend(offered)
            retire = list(offered) if self.retire_everything else self.retires.get(item["fact"], [])
            restate = self.restates.get(item["fact"], [])
            same = [offered[t] for t in restate if t in offered]
            lines.append(verdict_line(item["id"], same, [offered[t] for t in retire if t in offered]))
        return "\n".join(lines)

    def summarize_entities(self, v: Any) -> str:
        return json.dumps({"summaries": [{"id": e["id"], "summary": e["name"]} for e in v["entities"]]})


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def _episode(speaker: str, lines: Sequence[Line]) -> str:
    return f"{speaker}: " + " ".join(sentence for *_, sentence in lines)


async def _ingest(
    store: GraphStore, group: str, embedder: SentenceTransformerEmbedder, script: Script, episodes: list[str]
) -> list[Any]:
    ingestor = Ingestor(store, ScriptedLLM(script), embedder, IngestOptions())
    return [
        await ingestor.add_episode(EpisodeInput(text, group_id=group, reference_time=T0 + timedelta(days=i)))
        for i, text in enumerate(episodes)
    ]


async def _facts(store: GraphStore, group: str, names: list[str]) -> dict[str, Fact]:
    found = await store.entities_by_names(group, names)
    ids = sorted({e.uuid for matches in found.values() for e in matches})
    return {f.text: f for f in await store.facts_around(group, ids, FactFilter(time=EVERYTHING), limit=500)}


def _world(*updates: list[Line]) -> tuple[dict[str, list[Line]], list[str]]:
    episodes = [_episode("Alice", [line]) for line in BACKGROUND] + [
        _episode(lines[0][0], lines) for lines in updates
    ]
    lines = {_episode("Alice", [line]): [line] for line in BACKGROUND}
    lines.update({_episode(u[0][0], u): u for u in updates})
    return lines, episodes


CITY_CHAIN: list[Line] = [
    ("Alice", "Paris", "LIVES_IN", "Alice lives in Paris."),
    ("Alice", "Lyon", "RESIDES_IN", "Alice resides in Lyon now."),
    ("Alice", "Berlin", "MOVED_TO", "Alice moved to Berlin."),
    ("Alice", "Madrid", "IS_BASED_IN", "Alice is based in Madrid."),
]


async def test_one_relation_under_four_names_retires_each_earlier_city(
    store: GraphStore, group: str, minilm: SentenceTransformerEmbedder
) -> None:
    lines, episodes = _world(*[[line] for line in CITY_CHAIN])
    retires = {CITY_CHAIN[i][3]: [CITY_CHAIN[i - 1][3]] for i in range(1, len(CITY_CHAIN))}
    script = Script(lines, retires=retires)
    await _ingest(store, group, minilm, script, episodes)

    for i in range(1, len(CITY_CHAIN)):
        new, old = CITY_CHAIN[i][3], CITY_CHAIN[i - 1][3]
        assert old in script.shown.get(new, []), f"{old!r} was not shown for {new!r}"
    stored = await _facts(store, group, ["Alice"])
    for i in range(len(CITY_CHAIN) - 1):
        retired = stored[CITY_CHAIN[i][3]]
        assert retired.invalidated_by is not None
        assert retired.invalidated_by.fact_uuid == stored[CITY_CHAIN[i + 1][3]].uuid
    assert stored[CITY_CHAIN[-1][3]].invalidated_by is None
    assert all(stored[b[3]].invalidated_by is None for b in BACKGROUND), "background facts stay"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            ("Alice", "marathon", "TRAINING_FOR", "Alice is training for a marathon."),
            ("Alice", "knee injury", "HAS_NOT_RUN_SINCE", "Alice has not run at all since her knee injury."),
            id="denial",
        ),
        pytest.param(
            ("Alice", "coffee", "DRINKS", "Alice drinks coffee every morning."),
            ("Alice", "green tea", "WILL_SWITCH_TO", "Alice agreed to switch to green tea."),
            id="plan-replaces-habit",
        ),
        pytest.param(
            ("Alice", "Acme", "WORKS_AT", "Alice works at Acme as an engineer."),
            ("Alice", "job", "NO_LONGER_HAS", "Alice no longer works anywhere since she quit her job."),
            id="no-longer",
        ),
    ],
)
async def test_a_denial_or_a_new_plan_retires_the_old_claim(
    store: GraphStore, group: str, minilm: SentenceTransformerEmbedder, before: Line, after: Line
) -> None:
    lines, episodes = _world([before], [after])
    script = Script(lines, retires={after[3]: [before[3]]})
    results = await _ingest(store, group, minilm, script, episodes)

    assert before[3] in script.shown.get(after[3], []), "the old claim must be shown to the model"
    assert [f.text for f in results[-1].invalidated] == [before[3]]
    stored = await _facts(store, group, ["Alice"])
    assert all(stored[b[3]].invalidated_by is None for b in BACKGROUND)


async def test_two_people_with_the_same_relation_never_retire_each_other(
    store: GraphStore, group: str, minilm: SentenceTransformerEmbedder
) -> None:
    bob = [
        ("Bob", "Paris", "LIVES_IN", "Bob lives in Paris."),
        ("Bob", "Acme", "WORKS_AT", "Bob works at Acme."),
    ]
    alice = [
        ("Alice", "Paris", "LIVES_IN", "Alice lives in Paris."),
        ("Alice", "Acme", "WORKS_AT", "Alice works at Acme."),
    ]
    script = Script({_episode("Bob", bob): bob, _episode("Alice", alice): alice}, retire_everything=True)
    results = await _ingest(store, group, minilm, script, [_episode("Bob", bob), _episode("Alice", alice)])

    assert results[-1].invalidated == []
    assert not any(b[3] in shown for shown in script.shown.values() for b in bob), script.shown
    stored = await _facts(store, group, ["Bob"])
    assert all(stored[b[3]].invalidated_by is None and stored[b[3]].expired_at is None for b in bob)


async def test_a_fact_restated_in_other_words_is_a_duplicate_not_a_contradiction(
    store: GraphStore, group: str, minilm: SentenceTransformerEmbedder
) -> None:
    first = (
        "Alice",
        "St. Mary's hospital",
        "WORKS_AS_NURSE_AT",
        "Alice works as a nurse at St. Mary's hospital.",
    )
    again = ("Alice", "nursing", "HAS_CAREER_IN", "Alice has a career in nursing at a hospital.")
    lines, episodes = _world([first], [again])
    script = Script(lines, restates={again[3]: [first[3]]})
    results = await _ingest(store, group, minilm, script, episodes)

    assert first[3] in script.shown.get(again[3], [])
    assert results[-1].invalidated == []
    stored = await _facts(store, group, ["Alice"])
    assert again[3] not in stored, "a restatement extends the first statement, it is not a new fact"
    kept = stored[first[3]]
    assert kept.invalidated_by is None and len(kept.episodes) == 2


BUSY: list[Line] = [
    ("Alice", "guitar lessons", "TAKES", "Alice takes guitar lessons every Tuesday evening."),
    ("Alice", "live shows", "NERVOUS_ABOUT", "Alice is nervous about playing live shows."),
    ("Alice", "old songs", "LOVES_COVERING", "Alice loves performing covers of old songs."),
    (
        "Alice",
        "concert",
        "EXCITED_ABOUT",
        "Alice is excited about the concert next week, it will be awesome.",
    ),
    ("Alice", "Bob", "PROUD_OF", "Alice is so proud of Bob and thinks he is awesome."),
    ("Alice", "music", "PASSIONATE_ABOUT", "Alice is passionate about music and playing with others."),
]
BAND, FESTIVAL = "Alice's band", "jazz festival"
PLANS: list[Line] = [
    (BAND, FESTIVAL, "WILL_PERFORM_AT", "Alice's band will perform at the jazz festival soon."),
    (BAND, FESTIVAL, "PRACTICING_FOR", "Alice's band has been practicing hard for the jazz festival."),
]
DONE: Line = (
    "Alice",
    "jazz festival",
    "PERFORMED_AT",
    "Alice had her performance at the jazz festival, and it was awesome.",
)


async def test_a_busy_subject_does_not_crowd_out_the_facts_of_the_object(
    store: GraphStore, group: str, minilm: SentenceTransformerEmbedder
) -> None:
    """Alice has many facts close to a performance; the festival has two. Each shared endpoint is shown
    its own best candidates, so the festival's plans reach the model beside Alice's many facts."""
    lines, episodes = _world(*[[line] for line in BUSY], PLANS, [DONE])
    script = Script(lines, retires={DONE[3]: [p[3] for p in PLANS]})
    results = await _ingest(store, group, minilm, script, episodes)

    shown = script.shown.get(DONE[3], [])
    assert all(p[3] in shown for p in PLANS), shown
    assert sorted(f.text for f in results[-1].invalidated) == sorted(p[3] for p in PLANS)
    stored = await _facts(store, group, ["Alice"])
    assert all(stored[line[3]].invalidated_by is None for line in [*BACKGROUND, *BUSY])
