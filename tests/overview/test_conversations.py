"""Conversation chains and their running summaries (embedded store, scripted model): order whatever the
arrival, summaries folded from the new episodes only, late episodes marked, failures that keep what was
folded, concurrent updaters."""

from __future__ import annotations

from datetime import timedelta

import pytest

from epigraph.errors import ConfigError, LLMError
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode, EpisodeStatus
from epigraph.overview import Conversations, OverviewOptions
from epigraph.testing import HashEmbedder, ScriptedLLM, ScriptedReply
from epigraph.testing.overview import OVERVIEW_SCRIPT, conversation_reply
from tests.support.records import T0

G = "g"
CHAT = "chat:ann-bob"


class Clock:
    """Recording times that only go forward, one minute a tick."""

    def __init__(self) -> None:
        self.now = T0 + timedelta(days=100)

    def __call__(self) -> object:
        self.now += timedelta(minutes=1)
        return self.now


async def say(
    store: EmbeddedStore,
    clock: Clock,
    text: str,
    day: int,
    source: str = CHAT,
    status: EpisodeStatus = EpisodeStatus.DONE,
) -> Episode:
    episode = Episode(
        group_id=G, content=text, reference_time=T0 + timedelta(days=day), source_description=source,
        created_at=clock(), status=status,
    )  # fmt: skip
    await store.save_episode(episode)
    return episode


def service(store: EmbeddedStore, llm: ScriptedLLM | None, **options: object) -> Conversations:
    return Conversations(store, llm, HashEmbedder(), OverviewOptions(**options))  # type: ignore[arg-type]


async def test_episodes_arriving_out_of_order_are_read_in_order(store: EmbeddedStore) -> None:
    clock = Clock()
    third = await say(store, clock, "Ann: see you Friday", 3)
    first = await say(store, clock, "Ann: hi Bob", 1)
    second = await say(store, clock, "Bob: hi Ann", 2)
    await say(store, clock, "a mail", 2, source="mail")
    conversation = await service(store, None).conversation(G, CHAT)
    assert conversation is not None and conversation.total == 3 and conversation.summary is None
    assert [e.uuid for e in conversation.episodes] == [first.uuid, second.uuid, third.uuid]
    assert conversation.next(first.uuid) == second and conversation.previous(second.uuid) == first
    assert conversation.previous(first.uuid) is None and conversation.next(third.uuid) is None
    assert await service(store, None).conversation(G, "nothing") is None
    chains = await service(store, None).chains(G)
    assert [(v.key, v.chain.episodes, v.unsummarized) for v in chains] == [(CHAT, 3, 3), ("mail", 1, 1)]


async def test_a_summary_is_folded_from_the_new_episodes_only(store: EmbeddedStore) -> None:
    clock = Clock()
    llm = ScriptedLLM(OVERVIEW_SCRIPT)
    conversations = service(store, llm, clock=clock)
    await say(store, clock, "Ann: I moved to Berlin", 1)
    await say(store, clock, "Bob: congratulations", 1)
    first = await conversations.update(G, CHAT)
    assert first.folded == 2 and first.summary is not None and first.summary.version == 1
    assert len(llm.calls) == 1 and "Berlin" in first.summary.summary
    assert (await conversations.update(G, CHAT)).folded == 0 and len(llm.calls) == 1  # nothing new: no call
    await say(store, clock, "Ann: I adopted a cat", 5)
    late = await say(store, clock, "Bob: I forgot to say I was in Rome", 0)  # dated before everything
    second = await conversations.update(G, CHAT)
    assert second.folded == 2 and second.summary is not None and second.summary.version == 2
    shown = str(llm.calls[-1].variables["episodes"]).splitlines()
    assert len(shown) == 2 and "Berlin" not in " ".join(shown)  # only the new ones
    assert shown[0].startswith("[2024-01-01] Bob: I forgot") and shown[0].endswith("(arrived late)")
    assert not shown[1].endswith("(arrived late)")
    assert str(llm.calls[-1].variables["summary"]) == first.summary.summary
    stored = second.summary
    assert (stored.episodes, stored.first_at) == (4, late.reference_time)
    assert stored.last_at == T0 + timedelta(days=5)
    (view,) = await conversations.chains(G)
    assert view.summary == stored and view.unsummarized == 0


async def test_pending_and_failed_episodes_wait(store: EmbeddedStore) -> None:
    clock = Clock()
    await say(store, clock, "Ann: hello", 1)
    await say(store, clock, "Ann: not ingested yet", 2, status=EpisodeStatus.PENDING)
    update = await service(store, ScriptedLLM(OVERVIEW_SCRIPT), clock=clock).update(G, CHAT)
    assert update.folded == 1


async def test_a_long_backlog_is_folded_in_several_calls_and_a_failure_keeps_the_calls_before(
    store: EmbeddedStore,
) -> None:
    clock = Clock()
    for i in range(12):
        await say(store, clock, f"Ann: message number {i} " + "word " * 40, i)
    calls = iter([None, LLMError("the server went away")])

    def reply(request: object) -> str | ScriptedReply:
        error = next(calls, None)
        return ScriptedReply(error=error) if error else conversation_reply(request)  # type: ignore[arg-type]

    llm = ScriptedLLM({"summarize_conversation": reply})
    conversations = service(store, llm, conversation_tokens=200, clock=clock)
    broken = await conversations.update(G, CHAT)
    assert broken.error is not None and "went away" in broken.error and broken.report.warnings
    assert broken.summary is not None and 0 < broken.folded < 12 and len(llm.calls) == 2
    healed = await service(store, ScriptedLLM(OVERVIEW_SCRIPT), conversation_tokens=200, clock=clock).update(
        G, CHAT
    )
    assert healed.error is None and broken.folded + healed.folded == 12
    assert healed.summary is not None and healed.summary.episodes == 12
    assert healed.report.llm_calls > 1  # the rest still took more than one call


async def test_of_two_updaters_of_one_chain_one_stores(store: EmbeddedStore) -> None:
    clock = Clock()
    await say(store, clock, "Ann: hello", 1)
    one = service(store, ScriptedLLM(OVERVIEW_SCRIPT), clock=clock)
    two = service(store, ScriptedLLM({"summarize_conversation": "another summary"}), clock=clock)
    stale = await one.update(G, CHAT)
    # a second updater that read the chain before the first stored: its version is taken
    assert stale.summary is not None
    reread = stale.summary.model_copy(update={"version": 1, "summary": "another summary"})
    assert await store.save_conversation_summary(reread) is False
    await say(store, clock, "Bob: hi", 2)
    assert (await two.update(G, CHAT)).summary.version == 2  # type: ignore[union-attr]


async def test_a_reset_folds_the_chain_again_and_bad_keys_are_refused(store: EmbeddedStore) -> None:
    clock = Clock()
    llm = ScriptedLLM(OVERVIEW_SCRIPT)
    conversations = service(store, llm, clock=clock)
    await say(store, clock, "Ann: hello", 1)
    await conversations.update(G, CHAT)
    rebuilt = await conversations.update(G, CHAT, rebuild=True)
    assert rebuilt.folded == 1 and rebuilt.summary is not None and rebuilt.summary.version == 3
    assert str(llm.calls[-1].variables["summary"]) == "(none yet)"
    with pytest.raises(ValueError, match="conversation key"):
        await conversations.update(G, "bad\nkey")
    with pytest.raises(ConfigError):
        await service(store, None).update(G, CHAT)
    updates = await conversations.update_all(G)
    assert updates == []  # nothing unsummarized
