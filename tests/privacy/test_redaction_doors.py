"""The doors of a redacted group that are not episodes (issue 62 part 2), with the policy on:

- a search, an entity lookup or a question holding a raw value reads it as the group's placeholder (so a
  raw phone number finds its placeholder's facts), a value no vault holds as ``<PHONE>``; the model never
  sees the raw value, and reading never adds to the vault;
- a correction by hand is redacted into the group's vault like an episode (the same placeholder);
- a dump holding personal data is refused under the policy (file, line, field; nothing written), and a
  loaded dump's placeholders are reserved, so the loaded group never numbers a new value as one of them;
  a vault that already numbers one of them for a value of its own refuses the load.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from epigraph.errors import ConflictError, InputError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.store import VaultEntry
from tests.support.privacy_scene import EMAIL, PHONE, T0, Setup, inputs, originals_in

OTHER_PHONE = "+1 415 555 0132"


async def test_a_raw_value_in_a_search_finds_its_placeholders_facts(setup: Setup) -> None:
    async with setup.graph() as kg:
        await kg.add_episodes(inputs())
        found = await kg.search(f"who shared {PHONE}?")
        entity = await kg.entity(PHONE)
        unknown = await kg.search(f"who has {OTHER_PHONE}?")
        centred = await kg.search("shared", center=PHONE)
        await kg.group("other").add_episode(f"{OTHER_PHONE} and {PHONE}", speaker="Mo", reference_time=T0)
        both = await kg.search(PHONE, group_ids=["default", "other"])
    assert {r.fact.text for r in found.facts[:2]} == {"Dana shared <PHONE_1>.", "Lee shared <PHONE_1>."}
    assert entity.entity.name == "<PHONE_1>"
    assert found.query == "who shared <PHONE_1>?" and unknown.query == "who has <PHONE>?"  # no vault holds it
    assert centred.facts and centred.facts[0].fact.text.endswith("<PHONE_1>.")
    assert both.query == "<PHONE_1> <PHONE_2>"  # each group's own number for it


async def test_a_question_reaches_the_model_with_placeholders_only(setup: Setup) -> None:
    async with setup.graph() as kg:
        await kg.add_episodes(inputs())
        asked = len(setup.server.chat_requests)
        answer = await kg.ask(f"what did Dana say about {EMAIL} and {OTHER_PHONE}?", streaming=False)
    question_calls = setup.sent_since(asked)
    assert answer.usage.calls >= 1 and question_calls
    assert EMAIL not in question_calls and "415 555 0132" not in question_calls
    assert "<EMAIL_1>" in question_calls and "<PHONE>" in question_calls
    assert originals_in(setup.stored()) == []


async def test_reading_adds_nothing_to_the_vault(setup: Setup) -> None:
    async with setup.graph() as kg:
        await kg.add_episodes(inputs())
        await kg.search(f"who has {OTHER_PHONE}?")
        result = await kg.add_episode(
            f"mine is {OTHER_PHONE}", speaker="Mo", reference_time=T0 + timedelta(1)
        )
    assert result.episode.content == "Mo: mine is <PHONE_2>"  # the search did not number it


async def test_a_correction_is_redacted_into_the_groups_vault(setup: Setup) -> None:
    async with setup.graph() as kg:
        await kg.add_episodes(inputs())
        added = await kg.corrections.add_fact(
            "Dana", "REACHABLE_AT", PHONE, text=f"Dana answers {PHONE} and {OTHER_PHONE}",
            author="ops", reason=f"she wrote from {EMAIL}",
        )  # fmt: skip
        renamed = await kg.corrections.rename_entity("Lee", "lee.park@example.com", author="ops")
        history = await kg.corrections.history(entity=PHONE)
    fact = added.after.facts[0]
    assert fact.text == "Dana answers <PHONE_1> and <PHONE_2>" and added.reason == "she wrote from <EMAIL_1>"
    assert renamed.after.entities[0].name == "<EMAIL_2>"
    assert [c.uuid for c in history] == [added.uuid]
    stored = setup.stored()
    assert originals_in(stored) == [] and b"415 555 0132" not in stored and b"lee.park" not in stored


async def dumped(setup: Setup, path: Path, *, redact: bool) -> None:
    async with setup.graph(redact=redact) as kg:
        await kg.add_episodes(inputs())
        await kg.transfer.export(path)


async def test_a_dump_with_personal_data_is_refused_under_the_policy(setup: Setup, tmp_path: Path) -> None:
    dump = tmp_path / "raw.jsonl"
    await dumped(setup, dump, redact=False)
    target = Setup(setup.server, tmp_path / "target.db")
    async with target.graph() as kg:
        with pytest.raises(InputError) as refused:
            await kg.group("moved").transfer.load(dump, into="moved")
        assert (await kg.group("moved").stats()).episodes == 0
    error = refused.value
    line = dump.read_text().splitlines()[error.line - 1] if error.line else ""
    assert error.file == str(dump) and error.field == "content" and '"record": "episode"' in line
    assert "a phone number" in str(error) or "an email address" in str(error) or "card" in str(error)
    assert originals_in(target.stored()) == []
    async with target.graph(redact=False) as kg:  # the policy off: loaded as it is
        report = await kg.group("moved").transfer.load(dump, into="moved")
    assert report.groups["moved"]["episode"] == 4


async def test_a_loaded_groups_placeholders_are_never_given_to_a_new_value(
    setup: Setup, tmp_path: Path
) -> None:
    dump = tmp_path / "redacted.jsonl"
    await dumped(setup, dump, redact=True)
    assert originals_in(dump.read_bytes()) == [] and b"<PHONE_1>" in dump.read_bytes()
    target = Setup(setup.server, tmp_path / "target.db")
    async with target.graph() as kg:
        await kg.transfer.load(dump)
        new = await kg.add_episode(f"call {OTHER_PHONE} or mail x@y.org", speaker="Mo", reference_time=T0)
    assert new.episode.content == "Mo: call <PHONE_2> or mail <EMAIL_2>"  # 1 is the dump's


async def test_a_vault_numbering_the_dumps_placeholders_refuses_the_load(
    setup: Setup, tmp_path: Path
) -> None:
    dump = tmp_path / "redacted.jsonl"
    await dumped(setup, dump, redact=True)
    target = Setup(setup.server, tmp_path / "target.db")
    store = EmbeddedStore(str(target.path))
    await store.setup(embedding_dim=64)
    await store.placeholders("default", [VaultEntry("phone", b"someone else's number")])  # <PHONE_1>
    await store.close()
    async with target.graph() as kg:
        with pytest.raises(ConflictError, match="<PHONE_1>"):
            await kg.transfer.load(dump)
        assert (await kg.stats()).episodes == 0
        report = await kg.group("fresh").transfer.load(dump, into="fresh")  # a group without a vault
    assert report.groups["fresh"]["episode"] == 4
