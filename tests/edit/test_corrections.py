"""Corrections by hand through ``KnowledgeGraph`` on the quickstart graph, on both stores: each operation,
its record in the entity's history, its undo, and the errors for bad input (nothing written)."""

from __future__ import annotations

from contextlib import aclosing
from datetime import UTC, datetime
from typing import Any

import pytest

from epigraph import KnowledgeGraph
from epigraph.errors import ConflictError, EntityNotFound, FactNotFound, UsageError
from epigraph.graph.corrections import Correction, CorrectionOp
from epigraph.graph.model import Fact
from epigraph.graph.store import DumpItem, FactFilter, GraphStore, TimeFilter

T = datetime(2024, 6, 1, tzinfo=UTC)


async def dump_of(kg: KnowledgeGraph, *, corrections: bool = False) -> list[DumpItem]:
    async with aclosing(kg.store.dump([kg.group_id], vectors=True)) as items:
        return [i async for i in items if corrections or not isinstance(i, Correction)]


async def fact_named(kg: KnowledgeGraph, text: str) -> Fact:
    found = [i for i in await dump_of(kg) if isinstance(i, Fact) and i.text == text]
    assert len(found) == 1, f"no single fact {text!r}"
    return found[0]


async def current_texts(kg: KnowledgeGraph, name: str, **when: Any) -> set[str]:
    view = await kg.entity(name)
    if not when:
        return {f.text for f in view.current}
    facts = await kg.store.facts_around(kg.group_id, [view.entity.uuid], FactFilter(time=TimeFilter(**when)))
    return {f.text for f in facts}


async def test_a_fact_added_by_hand_is_dated_sourced_and_in_the_history(quickstart: KnowledgeGraph) -> None:
    kg = quickstart
    made = await kg.corrections.add_fact("Bob", "knows", "caro", text="Bob has known Carol since school.",
                             valid_at="2001-09-01", reason="told me at lunch")  # fmt: skip
    assert made.author == "person:alice" and made.operation == CorrectionOp.ADD_FACT
    fact = made.after.facts[0]
    stored = (await kg.store.get_facts(kg.group_id, [fact.uuid]))[0]
    assert stored.episodes == [] and stored.relation == "KNOWS"
    assert stored.attributes == {"source": "person:alice", "correction": made.uuid}
    assert stored.valid_at == datetime(2001, 9, 1, tzinfo=UTC)
    assert stored.text_embedding is not None  # searchable by meaning like any fact
    carol = await kg.entity("Carol")
    assert stored.target_uuid == carol.entity.uuid  # found through the alias
    assert "Bob has known Carol since school." in await current_texts(kg, "Carol")
    bob = await kg.entity("Bob")
    assert "Bob has known Carol since school." in bob.summary  # composed summary rewritten
    assert [c.uuid for c in bob.corrections] == [made.uuid]
    history = bob.to_dict()["corrections"]
    assert history[0]["author"] == "person:alice" and history[0]["reason"] == "told me at lunch"
    assert history[0]["description"] == "added 'Bob has known Carol since school.'"
    assert [c.uuid for c in await kg.corrections.history(entity="Carol")] == [made.uuid]
    found = await kg.search("known since school", limit=3)
    assert fact.uuid in [f.fact.uuid for f in found.facts]


async def test_naming_an_unknown_entity_is_an_error_unless_creating(quickstart: KnowledgeGraph) -> None:
    kg = quickstart
    before = await dump_of(kg, corrections=True)
    with pytest.raises(EntityNotFound, match="no entity 'Dave'"):
        await kg.corrections.add_fact("Dave", "lives in", "Berlin")
    with pytest.raises(UsageError, match="both ends are 'Alice'"):
        await kg.corrections.add_fact("Alice", "knows", "alice")
    with pytest.raises(UsageError, match="both ends are 'Zed'"):  # one new entity, not two of one name
        await kg.corrections.add_fact("Zed", "knows", "zed", create=True)
    with pytest.raises(UsageError, match="relation"):
        await kg.corrections.add_fact("Alice", "!!", "Bob")
    with pytest.raises(UsageError, match="valid_at: not an ISO date"):
        await kg.corrections.add_fact("Alice", "knows", "Bob", valid_at="last year")
    with pytest.raises(UsageError, match="invalid_at"):
        await kg.corrections.add_fact("Alice", "knows", "Bob", valid_at="2024-01-02", invalid_at="2024-01-01")
    with pytest.raises(UsageError, match="author must be kind:name"):
        await kg.corrections.add_fact("Alice", "knows", "Bob", author="a\x01b")
    assert await dump_of(kg, corrections=True) == before
    made = await kg.corrections.add_fact("Dave", "lives in", "Berlin", create=True, author="team:data")
    dave = await kg.entity("Dave")
    assert dave.entity.uuid == made.after.entities[0].uuid and made.author == "team:data"
    assert {f.text for f in dave.current} == {"Dave lives in Berlin"}
    assert dave.summary == "Dave lives in Berlin."


async def test_retiring_a_fact_by_hand_keeps_its_past(quickstart: KnowledgeGraph) -> None:
    kg = quickstart
    fact = await fact_named(kg, "Bob teaches at the Sorbonne.")
    made = await kg.corrections.retire_fact(fact.uuid, at="2024-05-01", reason="he retired")
    assert "Bob teaches at the Sorbonne." not in await current_texts(kg, "Bob")
    assert "Bob teaches at the Sorbonne." in await current_texts(
        kg, "Bob", as_of=datetime(2024, 4, 1, tzinfo=UTC)
    )
    view = await kg.entity("Sorbonne")
    [retired] = view.history
    assert retired.by_correction is not None and retired.by_correction.uuid == made.uuid
    assert retired.fact.invalid_at == datetime(2024, 5, 1, tzinfo=UTC)
    assert "person:alice, by hand" in str(view.tables()[1].rows)
    assert view.summary == ""  # no believed fact is left to say
    with pytest.raises(UsageError, match="already retired"):
        await kg.corrections.retire_fact(fact.uuid)
    other = await fact_named(kg, "Carol lives in Berlin.")
    with pytest.raises(UsageError, match="cannot end before"):
        await kg.corrections.retire_fact(other.uuid, at="2020-01-01")
    with pytest.raises(FactNotFound):
        await kg.corrections.retire_fact("no-such-fact")


async def test_editing_a_fact_rewords_and_redates_it_in_place(quickstart: KnowledgeGraph) -> None:
    kg = quickstart
    fact = await fact_named(kg, "Carol founded Globex in 2019.")
    made = await kg.corrections.edit_fact(
        fact.uuid, text="Carol founded Globex in 2018.", valid_at="2018-01-01"
    )
    [edited] = await kg.store.get_facts(kg.group_id, [fact.uuid])
    assert edited.text == "Carol founded Globex in 2018." and edited.valid_at == datetime(
        2018, 1, 1, tzinfo=UTC
    )
    assert edited.text_embedding != fact.text_embedding and edited.episodes == fact.episodes
    assert made.before.facts[0].text == "Carol founded Globex in 2019."
    assert (
        "valid_at 2019-01-01T00:00:00+00:00 -> 2018-01-01T00:00:00+00:00"
        in (await kg.entity("Globex")).to_dict()["corrections"][0]["description"]
    )
    with pytest.raises(UsageError, match="nothing to change"):
        await kg.corrections.edit_fact(fact.uuid, text="Carol founded Globex in 2018.")
    with pytest.raises(UsageError, match="before valid_at"):
        await kg.corrections.edit_fact(fact.uuid, invalid_at="2017-01-01")
    await kg.corrections.edit_fact(fact.uuid, valid_at=None)
    assert (await kg.store.get_facts(kg.group_id, [fact.uuid]))[0].valid_at is None


async def test_deleting_a_fact_restores_what_it_retired_and_undo_takes_it_back(
    quickstart: KnowledgeGraph,
) -> None:
    kg = quickstart
    before = await dump_of(kg)
    berlin = await fact_named(kg, "Alice lives in Berlin.")
    made = await kg.corrections.delete_fact(berlin.uuid, reason="she never moved")
    assert made.operation == CorrectionOp.DELETE_FACT
    assert await kg.store.get_facts(kg.group_id, [berlin.uuid]) == []
    texts = await current_texts(kg, "Alice")
    assert "Alice lives in Paris." in texts and "Alice lives in Berlin." not in texts
    await kg.corrections.undo(made.uuid, author="bob")
    assert await dump_of(kg) == before
    kinds = [(c.operation, c.author) for c in await kg.corrections.history()]
    assert kinds == [(CorrectionOp.UNDO, "person:bob"), (CorrectionOp.DELETE_FACT, "person:alice")]
    with pytest.raises(UsageError, match="already undone"):
        await kg.corrections.undo(made.uuid)


async def test_a_merge_moves_names_facts_and_mentions_and_unmerge_restores_them_exactly(
    quickstart: KnowledgeGraph,
) -> None:
    kg = quickstart
    before = await dump_of(kg)
    acme = (await kg.entity("Acme")).entity
    globex = await kg.entity("Globex")
    acme_mentions = await kg.store.mentions(kg.group_id, [acme.uuid])
    made = await kg.corrections.merge_entities("Globex", "Acme", reason="the same company")
    merged = await kg.entity("acme")  # the old name is an alias now
    assert merged.entity.uuid == globex.entity.uuid and merged.aliases == ["Acme"]
    assert {f.text for f in merged.current} >= {"Acme is located in Paris.", "Carol founded Globex in 2019."}
    assert merged.mentions == globex.mentions + len(acme_mentions)
    assert "Acme is located in Paris." in merged.summary
    assert await kg.store.get_entities(kg.group_id, [acme.uuid]) == []
    assert (
        merged.to_dict()["corrections"][0]["description"] == "merged 'Acme' into 'Globex' (2 fact(s) moved)"
    )

    undone = await kg.corrections.unmerge_entities("Globex", reason="they are not")
    assert undone.undoes == made.uuid
    assert await dump_of(kg) == before  # entities, facts, mentions, summaries, vectors: all as they were
    with pytest.raises(UsageError, match="nothing was merged into 'Globex'"):
        await kg.corrections.unmerge_entities("Globex")


async def test_an_undo_refused_after_a_later_change_names_it(quickstart: KnowledgeGraph) -> None:
    kg = quickstart
    made = await kg.corrections.merge_entities("Globex", "Acme")
    fact = await fact_named(kg, "Acme is located in Paris.")
    await kg.corrections.edit_fact(fact.uuid, text="Acme was located in Paris.")
    now = await dump_of(kg, corrections=True)
    with pytest.raises(ConflictError, match=f"fact '{fact.uuid}' changed since"):
        await kg.corrections.undo(made.uuid)
    assert await dump_of(kg, corrections=True) == now


async def test_merge_and_rename_refuse_bad_input(quickstart: KnowledgeGraph, other_group: str) -> None:
    kg = quickstart
    before = await dump_of(kg, corrections=True)
    with pytest.raises(UsageError, match="are the same entity"):
        await kg.corrections.merge_entities("Carol", "Caro")
    with pytest.raises(EntityNotFound, match="no entity 'Globx' in group"):
        await kg.corrections.merge_entities("Globx", "Acme")
    elsewhere = (await kg.entity("Acme")).entity.model_copy(update={"group_id": other_group})
    with pytest.raises(UsageError, match="corrections never cross groups"):
        await kg.corrections.merge_entities("Globex", elsewhere)
    with pytest.raises(UsageError, match=r"already names .Globex..*merge the two entities"):
        await kg.corrections.rename_entity("Acme", "globex")
    with pytest.raises(UsageError, match="nothing to change"):
        await kg.corrections.rename_entity("Acme", "Acme")
    assert await dump_of(kg, corrections=True) == before


async def test_rename_keeps_the_old_name_as_an_alias(quickstart: KnowledgeGraph) -> None:
    kg = quickstart
    made = await kg.corrections.rename_entity("Sorbonne", "Sorbonne University")
    view = await kg.entity("sorbonne")
    assert view.name == "Sorbonne University" and view.aliases == ["Sorbonne"]
    assert view.entity.name_embedding != made.before.entities[0].name_embedding
    await kg.corrections.undo(made.uuid)
    assert (await kg.entity("Sorbonne")).aliases == []
    await kg.corrections.rename_entity("Sorbonne", "La Sorbonne", keep_alias=False)
    with pytest.raises(EntityNotFound):
        await kg.entity("Sorbonne")


class Interfering:
    """A GraphStore that changes the group once, just before the first correction is applied (as an
    ingested episode would between the correction's reads and its write)."""

    def __init__(self, inner: GraphStore, change: Any) -> None:
        self.inner, self.change, self.applies = inner, change, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def apply_correction(self, correction: Correction) -> None:
        self.applies += 1
        if self.applies == 1:
            await self.change(self.inner)
        await self.inner.apply_correction(correction)


async def test_a_correction_raced_by_a_write_is_built_again(quickstart: KnowledgeGraph) -> None:
    kg = quickstart
    fact = await fact_named(kg, "Carol lives in Berlin.")

    async def reword(store: GraphStore) -> None:
        later = fact.model_copy(update={"text": "Carol lives in Berlin-Mitte."})
        await store.apply_correction(Correction(
            group_id=kg.group_id, operation=CorrectionOp.EDIT_FACT, author="person:model",
            before={"facts": [fact]}, after={"facts": [later]},
        ))  # fmt: skip

    interfering = Interfering(kg.store, reword)
    raced = KnowledgeGraph(
        kg.settings, store=interfering, llm=kg.llm, embedder=kg.embedder, group_id=kg.group_id
    )  # type: ignore[arg-type]
    made = await raced.corrections.retire_fact(fact.uuid, at=T)
    assert interfering.applies == 2
    assert made.before.facts[0].text == "Carol lives in Berlin-Mitte."  # built again from the new state
    [retired] = await kg.store.get_facts(kg.group_id, [fact.uuid])
    assert retired.text == "Carol lives in Berlin-Mitte." and retired.invalid_at == T
