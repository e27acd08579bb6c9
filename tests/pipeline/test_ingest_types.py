"""Custom entity and relation types: labels, attributes, allowed pairs enforced on write."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from epigraph.episodes.inputs import EpisodeInput
from epigraph.errors import UsageError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.ingestion.ingestor import Ingestor
from epigraph.pipeline.ontology import Ontology, clean_attributes, relation_name
from epigraph.pipeline.options import IngestOptions
from epigraph.testing import HashEmbedder
from tests.support.world import T0, E, F, Turn, World


class Person(BaseModel):
    """A human being."""

    age: int | None = Field(default=None, description="age in years")


class Company(BaseModel):
    """A business that employs people."""


class City(BaseModel):
    """A city."""


class WorksAt(BaseModel):
    """Employment of a person by a company."""

    role: str | None = Field(default=None, description="job title")


ONTOLOGY = Ontology.build(
    [Person, Company, City], [WorksAt], {WorksAt: [(Person, Company)], "LIVES_IN": [(Person, "*")]}
)
CONTENT = "Ann: I'm 34, an engineer at Acme, living in Oslo."


def _world(**extra: object) -> World:
    return World(
        {
            CONTENT: Turn(
                [E("Ann", "person", {"age": "34", "hair": "red"}), E("Acme", "Company"), E("Oslo", "City")],
                [
                    F(
                        "Ann",
                        "Acme",
                        "WORKS_AT",
                        "Ann works at Acme as an engineer.",
                        attributes={"role": "engineer"},
                    ),
                    F("Acme", "Oslo", "WORKS_AT", "Acme works at Oslo."),
                    F("Oslo", "Ann", "LIVES_IN", "Oslo lives in Ann."),
                    F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo."),
                ],
            )
        },
        **extra,  # type: ignore[arg-type]
    )


async def test_types_label_entities_validate_attributes_and_refuse_disallowed_facts(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = _world()
    llm = world.llm()
    result = await Ingestor(store, llm, embedder, IngestOptions(ontology=ONTOLOGY)).add_episode(
        EpisodeInput(CONTENT, group_id="g", reference_time=T0)
    )

    entities = {e.name: e for e in result.entities}
    assert entities["Ann"].labels == ["Person"] and entities["Ann"].attributes == {"age": 34}
    assert entities["Acme"].labels == ["Company"] and entities["Oslo"].labels == ["City"]
    assert sorted(f.text for f in result.facts) == ["Ann lives in Oslo.", "Ann works at Acme as an engineer."]
    works = next(f for f in result.facts if f.relation == "WORKS_AT")
    assert works.attributes == {"role": "engineer"}
    warnings = "\n".join(result.report.warnings)
    assert "WORKS_AT is not allowed between Company -> City" in warnings
    assert "LIVES_IN is not allowed between City -> Person" in warnings
    assert "'hair'" in warnings
    prompt = llm.calls_for("extract_entities")[0].request.messages[0]["content"]  # the fixed part
    assert "Person (A human being. Attributes: age: age in years)" in prompt
    facts_prompt = llm.calls_for("extract_facts")[0].request.messages[0]["content"]
    assert "works at (Employment of a person by a company; Person -> Company" in facts_prompt


async def test_strict_relations_drop_undeclared_relations(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    strict = Ontology.build(
        [Person, Company, City], [WorksAt], {WorksAt: [(Person, Company)]}, strict_relations=True
    )
    result = await Ingestor(store, _world().llm(), embedder, IngestOptions(ontology=strict)).add_episode(
        EpisodeInput(CONTENT, group_id="g", reference_time=T0)
    )
    assert [f.relation for f in result.facts] == ["WORKS_AT"]
    assert any("LIVES_IN is not a declared relation type" in w for w in result.report.warnings)


async def test_an_exact_name_with_a_clashing_type_goes_to_the_model(
    store: EmbeddedStore, embedder: HashEmbedder
) -> None:
    world = World(
        {
            "Ann: I visited Paris.": Turn(["Ann", E("Paris", "City")]),
            "Ann: I met Paris at work.": Turn(["Ann", E("Paris", "Person")]),
        }
    )
    llm = world.llm()
    ingestor = Ingestor(store, llm, embedder, IngestOptions(ontology=ONTOLOGY))
    for content in world.turns:
        await ingestor.add_episode(EpisodeInput(content, group_id="g", reference_time=T0))
    assert len((await store.entities_by_names("g", ["Paris"]))["Paris"]) == 2
    assert len(llm.calls_for("resolve_episode")) == 1


def test_relation_names_and_bad_declarations() -> None:
    class HTTPLinkTo(BaseModel):
        pass

    assert relation_name(WorksAt) == "WORKS_AT"
    assert relation_name(HTTPLinkTo) == "HTTP_LINK_TO"
    with pytest.raises(UsageError, match="unknown entity types"):
        Ontology.build([Person], [WorksAt], {WorksAt: [(Person, Company)]})


def test_clean_attributes_keeps_what_validates() -> None:
    kept, problems = clean_attributes(Person, {"age": "41", "name": "x"})
    assert kept == {"age": 41} and len(problems) == 1
    kept, problems = clean_attributes(Person, {"age": "old"})
    assert kept == {} and "does not fit" in problems[0]
    assert clean_attributes(None, {}) == ({}, [])
