"""Personal data caught at the door (issue 62 part 2), through the real queue, the real ``openai`` SDK over
HTTP to the local test server (which records every request body) and a real SQLite file:

- the model never sees an original, and the store file (and its WAL) never holds one, byte for byte;
- a value is one placeholder in every episode of its group (so facts about it join), another group
  numbers its own;
- the originals come back with the right key only; without a key they are dropped;
- every door redacts: ``add_episode(s)``, ``ingest``, ``accept`` (HTTP, MCP), ``process`` (Kafka, and
  the episodes of its lane it runs ahead);
- with the option off nothing changes.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from epigraph import KnowledgeGraph, Redaction, Settings, reveal
from epigraph.errors import ConfigError, VaultKeyError
from epigraph.llm import OpenAIChat
from epigraph.privacy.vault import new_key
from epigraph.testing import HashEmbedder
from tests.support.privacy_scene import CARD, MESSAGES, PHONE, PLACEHOLDER, T0, Setup, inputs, originals_in


async def test_the_model_and_the_store_never_see_an_original(setup: Setup) -> None:
    async with setup.graph(key=new_key()) as kg:
        results = await kg.add_episodes(inputs())
        assert all(r.ok for r in results)
        episodes = [r.episode.content for r in results]
    assert setup.server.chat_requests, "the model was asked"
    assert originals_in(setup.sent()) == []
    assert originals_in(setup.stored()) == []
    assert episodes[0] == "Dana: my new number is <PHONE_1>, and mail goes to <EMAIL_1>."
    assert episodes[1] == "Lee: paid with <CARD_1>; the refund goes to <IBAN_1>!"


async def test_a_value_is_one_placeholder_in_its_group_and_facts_join(setup: Setup) -> None:
    async with setup.graph() as kg:
        await kg.add_episodes(inputs())
        text = f"my number is +1 415 555 0132 and {PHONE}"
        other = await kg.group("other").add_episode(text, speaker="Mo", reference_time=T0)
        stored = {e.content for e in await kg.episodes()}
        entity = await kg.entity("<PHONE_1>")
    assert "Lee: so Dana's phone is <PHONE_1>?" in stored
    assert (
        other.episode.content == "Mo: my number is <PHONE_1> and <PHONE_2>"
    )  # the other group's own numbers
    assert {f.text for f in entity.current} >= {"Dana shared <PHONE_1>.", "Lee shared <PHONE_1>."}


async def test_the_originals_come_back_with_the_right_key_only(setup: Setup) -> None:
    key = new_key()
    async with setup.graph(key=key) as kg:
        results = await kg.add_episodes(inputs())
        revealed = await reveal(kg, results[0].episode.content)
        assert revealed == "Dana: my new number is +442079460958, and mail goes to dana.reyes@example.org."
        with pytest.raises(VaultKeyError):
            await reveal(kg, results[0].episode.content, key=new_key())
        assert await reveal(kg, "nothing here", key=new_key()) == "nothing here"
    async with setup.graph(key=None) as kg:  # a keyed group refuses to be fed without its key
        with pytest.raises(ConfigError, match="EPIGRAPH_REDACT_KEY"):
            await kg.add_episode(f"call {PHONE}", speaker="Dana", reference_time=T0 + timedelta(days=1))
    async with setup.graph(key=new_key()) as kg:  # or with another key
        with pytest.raises(VaultKeyError):
            await kg.add_episode(f"call {PHONE}", speaker="Dana", reference_time=T0 + timedelta(days=1))


async def test_without_a_key_the_originals_are_dropped(setup: Setup) -> None:
    async with setup.graph() as kg:
        results = await kg.add_episodes(inputs())
        with pytest.raises(ConfigError, match="EPIGRAPH_REDACT_KEY"):  # no key at all
            await reveal(kg, results[0].episode.content)
        assert await reveal(kg, results[0].episode.content, key=new_key()) == results[0].episode.content
    assert originals_in(setup.stored()) == []


async def test_every_door_redacts(setup: Setup) -> None:
    async with setup.graph() as kg:
        queue = kg.ingestor
        one = await queue.add_episode(inputs()[0])
        streamed = [e async for e in queue.ingest(inputs("streamed"))]
        accepted = await queue.accept(inputs("accepted"))  # the HTTP and MCP door
        processed = await queue.process(inputs("kafka")[0].to_episode())  # the Kafka worker's door
    assert streamed
    for episode in (one.episode, *accepted, processed.episode):
        assert originals_in(episode.content) == []
        assert "<PHONE_1>" in episode.content or "<CARD_1>" in episode.content or "<IP_1>" in episode.content
    assert processed.episode.uuid == inputs("kafka")[0].to_episode().uuid  # the envelope's id is kept
    assert originals_in(setup.stored()) == []


async def test_the_kafka_door_redacts_the_episodes_it_runs_ahead(setup: Setup) -> None:
    later = [i.to_episode() for i in inputs("lane")]  # a lane's buffer: run ahead while the first commits
    async with setup.graph(in_flight=4) as kg:
        first = await kg.ingestor.process(later[0], after=later[1:])
        await kg.ingestor.drop_ahead(later[1:])
        stored = {e.uuid: e.content for e in await kg.group("lane").episodes()}
    assert first.ok
    assert set(stored) == {e.uuid for e in later}  # the runs ahead stored theirs pending
    assert all(PLACEHOLDER.search(text) for text in stored.values())
    assert originals_in(setup.sent()) == []
    assert originals_in(setup.stored()) == []


async def test_off_nothing_changes(setup: Setup) -> None:
    async with setup.graph(redact=False) as kg:
        results = await kg.add_episodes(inputs())
    assert [r.episode.content for r in results] == [m for m in MESSAGES]
    assert PHONE in setup.sent()


async def test_a_policy_chooses_the_kinds(setup: Setup) -> None:
    async with setup.graph(redact=Redaction(kinds=frozenset({"card"}))) as kg:
        result = await kg.add_episode(f"card {CARD}, phone {PHONE}", speaker="Lee", reference_time=T0)
    assert result.episode.content == f"Lee: card <CARD_1>, phone {PHONE}"
    with pytest.raises(ConfigError, match="unknown kind 'ssn'"):
        Redaction(kinds=frozenset({"ssn"}))


async def test_the_setting_and_the_flag_turn_it_on(setup: Setup) -> None:
    llm = OpenAIChat(model="fake", base_url=setup.server.base_url, api_key="k")
    settings = Settings.from_env(
        {"EPIGRAPH_REDACT": "1", "EPIGRAPH_EMBEDDER": "hash"}, db_path=str(setup.path)
    )
    async with KnowledgeGraph(settings, llm=llm, embedder=HashEmbedder(dim=64)) as kg:
        assert kg.options.redact is True
        result = await kg.add_episode(f"call {PHONE}", speaker="Dana", reference_time=T0)
    assert result.episode.content == "Dana: call <PHONE_1>"


async def test_person_names_are_replaced_by_the_tagger_when_asked(setup: Setup) -> None:
    pytest.importorskip("spacy")
    async with setup.graph(redact=Redaction(names=True)) as kg:
        first = await kg.add_episode("I had lunch with Maria Lopez, call her at 020 7946 0958", speaker="Lee",
                                     reference_time=T0)  # fmt: skip
        again = await kg.add_episode(
            "Maria Lopez says hi", speaker="Sam", reference_time=T0 + timedelta(hours=1)
        )
    assert "Maria" not in first.episode.content and "<PHONE_1>" in first.episode.content
    person = re.search(r"lunch with (<PERSON_\d+>)", first.episode.content)  # the speaker is a person too
    assert person is not None and again.episode.content.endswith(f"{person.group(1)} says hi")
    assert "Maria" not in setup.sent()
