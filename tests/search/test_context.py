"""Episode context: session neighbours and speakers (pure ranking steps, helpers, and search end to end)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode, EpisodeKind, EpisodeStatus, speaker_of
from epigraph.search import EPISODES_HYBRID, ScopeConfig, SearchConfig, search
from epigraph.search.config import COMBINED, HYBRID, HYBRID_CONTEXT
from epigraph.search.context import names, session_links
from epigraph.search.fusion import boost, spread_to_neighbours
from epigraph.testing import HashEmbedder

SEQ = ["a", "b", "c", "d", "e"]


# --- spread_to_neighbours ----------------------------------------------------------------------------


def test_a_hit_shares_a_discounted_score_with_its_neighbours() -> None:
    spread = spread_to_neighbours([("c", 1.0)], SEQ, window=2, discount=0.5)
    assert spread == [("c", 1.0), ("b", 0.5), ("d", 0.5), ("a", 0.25), ("e", 0.25)]


def test_a_turn_between_two_hits_gains_from_both_on_top_of_its_own_score() -> None:
    spread = dict(spread_to_neighbours([("b", 1.0), ("d", 0.4), ("c", 0.1)], SEQ, window=1, discount=0.5))
    assert spread["c"] == pytest.approx(0.1 + 0.5 + 0.2)
    assert spread["b"] == pytest.approx(1.0 + 0.05)
    assert spread["a"] == pytest.approx(0.5) and spread["e"] == pytest.approx(0.2)


def test_nothing_crosses_a_session_break() -> None:
    spread = dict(spread_to_neighbours([("b", 1.0)], SEQ, 2, 0.5, linked=[True, False, True, True]))
    assert spread == {"b": 1.0, "a": 0.5}


def test_only_the_first_hits_share_and_only_positive_scores() -> None:
    ranked = [("a", 1.0), ("e", 0.5), ("c", -1.0)]
    assert dict(spread_to_neighbours(ranked, SEQ, 1, 0.5, spreading=1)) == {
        "a": 1.0,
        "b": 0.5,
        "e": 0.5,
        "c": -1.0,
    }
    assert dict(spread_to_neighbours([("c", 0.0)], SEQ, 2, 0.5)) == {"c": 0.0}


def test_hits_outside_the_sequence_keep_their_score_and_ties_keep_the_input_order() -> None:
    spread = spread_to_neighbours([("x", 0.5), ("c", 1.0), ("y", 0.5)], SEQ, 1, 0.5)
    assert spread == [("c", 1.0), ("x", 0.5), ("y", 0.5), ("b", 0.5), ("d", 0.5)]


def test_window_zero_or_discount_zero_changes_no_score() -> None:
    ranked = [("b", 0.9), ("d", 0.3)]
    assert spread_to_neighbours(ranked, SEQ, 0, 0.5) == ranked
    assert dict(spread_to_neighbours(ranked, SEQ, 2, 0.0)) == {
        "b": 0.9,
        "d": 0.3,
        "a": 0.0,
        "c": 0.0,
        "e": 0.0,
    }


@pytest.mark.parametrize(
    ("window", "discount", "linked"),
    [(-1, 0.5, None), (1, 1.5, None), (1, -0.1, None), (1, 0.5, [True])],
)
def test_spread_validation(window: int, discount: float, linked: list[bool] | None) -> None:
    with pytest.raises(ValueError):
        spread_to_neighbours([("a", 1.0)], SEQ, window, discount, linked)


@given(
    st.lists(st.tuples(st.sampled_from([*SEQ, "x"]), st.floats(0, 10)), max_size=6, unique_by=lambda t: t[0]),
    st.integers(0, 3),
    st.floats(0, 1),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_spread_never_lowers_a_score_and_only_reaches_the_window(
    ranked: list[tuple[str, float]], window: int, discount: float, linked: list[bool]
) -> None:
    spread = dict(spread_to_neighbours(ranked, SEQ, window, discount, linked))
    assert all(spread[k] >= s for k, s in ranked)
    reachable = {k for k, _ in ranked}
    for key, score in ranked:
        if key in SEQ and score > 0:
            at = SEQ.index(key)
            for step in (-1, 1):
                i = at
                while abs(i - at) < window and 0 <= i + step < len(SEQ) and linked[min(i, i + step)]:
                    i += step
                    reachable.add(SEQ[i])
    assert set(spread) == reachable


# --- boost -------------------------------------------------------------------------------------------


def test_boost_multiplies_reorders_and_keeps_ties_in_input_order() -> None:
    assert boost([("a", 1.0), ("b", 0.6), ("c", 0.5)], {"b": 2.0}) == [("b", 1.2), ("a", 1.0), ("c", 0.5)]
    assert boost([("a", 1.0), ("b", 0.5)], {"b": 2.0}) == [("a", 1.0), ("b", 1.0)]


def test_boost_raises_negative_scores_too() -> None:
    assert boost([("a", -0.5), ("b", -1.0)], {"b": 4.0}) == [("b", -0.25), ("a", -0.5)]
    with pytest.raises(ValueError):
        boost([("a", 1.0)], {"a": 0.0})


# --- speakers and sessions ---------------------------------------------------------------------------

T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)


def ep(content: str, at: datetime = T0, *, group: str = "g", source: str = "chat", **kw: Any) -> Episode:
    return Episode(group_id=group, content=content, reference_time=at, source_description=source, **kw)


def test_speaker_of_a_message_is_its_prefix() -> None:
    assert speaker_of(ep("Caroline: I went to a support group.")) == "Caroline"
    assert speaker_of(ep("Jon Smith : hi")) == "Jon Smith"
    assert speaker_of(ep("see https://example.org")) is None
    assert speaker_of(ep("no speaker here")) is None
    assert speaker_of(ep("Caroline: a document", kind=EpisodeKind.TEXT)) is None


def test_a_query_names_a_speaker_by_whole_words_in_any_case() -> None:
    assert names("What did Caroline research?", "Caroline")
    assert names("what is caroline's identity", "Caroline")
    assert names("Did jon   smith call?", "Jon Smith")
    assert not names("What did Carolines do?", "Caroline")
    assert not names("What did Jon do?", "Jon Smith")
    assert not names("anything", "   ")


def test_sessions_break_on_a_time_gap_another_source_or_another_group() -> None:
    turns = [
        ep("A: 1"),
        ep("B: 2", T0 + timedelta(minutes=5)),
        ep("A: 3", T0 + timedelta(hours=3)),  # a new session: three hours later
        ep("B: 4", T0 + timedelta(hours=3), source="email"),
        ep("A: 5", T0 + timedelta(hours=3), source="email", group="h"),
    ]
    assert session_links(turns, timedelta(minutes=30)) == [True, False, False, False]
    assert session_links(turns[:3], timedelta(days=1)) == [True, True]


def test_only_episode_scopes_take_context() -> None:
    with pytest.raises(ValueError, match="only episodes"):
        SearchConfig(facts=HYBRID_CONTEXT)
    with pytest.raises(ValueError, match="only episodes"):
        SearchConfig(entities=replace(HYBRID, speaker_weight=2.0))
    for bad in ({"context_window": -1}, {"context_discount": 2.0}, {"speaker_weight": 0.0}):
        with pytest.raises(ValueError):
            ScopeConfig(**bad)
    assert COMBINED.episodes is HYBRID_CONTEXT and EPISODES_HYBRID.episodes is HYBRID_CONTEXT
    assert HYBRID_CONTEXT.uses_context and not HYBRID.uses_context


# --- search end to end ---------------------------------------------------------------------------------

DIM = 64
# Two sessions a week apart. The answer (Jon's reply, s1-4) shares no word with the question; the turn
# before it (Gina's question) matches it. The last turn of session 1 and the first of session 2 are
# adjacent in the group's order but a week apart.
TURNS = [
    ("s1-0", "Gina: Morning! The weather is lovely today.", 0),
    ("s1-1", "Jon: Lovely indeed, sunny and warm.", 1),
    ("s1-2", "Gina: I saw a show at the theatre yesterday.", 2),
    ("s1-3", "Gina: Which dance style do you like best?", 3),
    ("s1-4", "Jon: Contemporary, without a doubt. It lets me express myself.", 4),
    ("s1-5", "Gina: Nice, see you soon.", 5),
    ("s2-0", "Jon: Back again after a week of rehearsals.", 7 * 24 * 60),
    ("s2-1", "Gina: How did the rehearsals go?", 7 * 24 * 60 + 1),
    ("s2-2", "Jon: Tiring but fun, the group is great.", 7 * 24 * 60 + 2),
]


@pytest.fixture
async def chat() -> AsyncIterator[tuple[EmbeddedStore, HashEmbedder, dict[str, Episode]]]:
    store = EmbeddedStore(":memory:")
    await store.setup(embedding_dim=DIM)
    embedder = HashEmbedder(dim=DIM)
    vectors = await embedder.embed([text for _, text, _ in TURNS])
    episodes = {}
    for (key, text, minutes), vector in zip(TURNS, vectors, strict=True):
        episodes[key] = ep(
            text,
            T0 + timedelta(minutes=minutes),
            status=EpisodeStatus.DONE,
            content_embedding=[float(x) for x in vector],
        )
        await store.save_episode(episodes[key])
    try:
        yield store, embedder, episodes
    finally:
        await store.close()


async def test_the_reply_to_a_matching_turn_is_found_through_its_neighbour(
    chat: tuple[EmbeddedStore, HashEmbedder, dict[str, Episode]],
) -> None:
    store, embedder, turns = chat
    query = "Which dance style does Jon like best?"
    plain = SearchConfig(episodes=HYBRID, name="plain")
    before = await search(store, embedder, query, group_ids="g", config=plain, limit=3)
    after = await search(store, embedder, query, group_ids="g", config=EPISODES_HYBRID, limit=3)
    answer, question = turns["s1-4"], turns["s1-3"]
    assert before.episodes[0].uuid == question.uuid and answer.uuid not in [r.uuid for r in before.episodes]
    # Gina's matching question passed half its score to Jon's reply, and the query names Jon
    top = after.episodes[0]
    assert top.uuid == answer.uuid
    assert top.scores["context"] >= top.scores["fused"] + 0.5 * before.episodes[0].score
    assert top.scores["speaker"] == pytest.approx(2 * top.scores["context"]) == top.score


async def test_neighbours_stay_in_their_session_and_pass_the_during_filter(
    chat: tuple[EmbeddedStore, HashEmbedder, dict[str, Episode]],
) -> None:
    store, embedder, turns = chat
    # only the best hit shares (candidates=1): the first turn of session 2
    cfg = SearchConfig(episodes=replace(HYBRID_CONTEXT, speaker_weight=1.0, candidates=1), name="ctx")
    found = await search(store, embedder, "rehearsals week back again", group_ids="g", config=cfg, limit=10)
    scores = {r.uuid: r.scores for r in found.episodes}
    best = found.episodes[0] if found.episodes[0].uuid == turns["s2-0"].uuid else found.episodes[1]
    assert best.uuid == turns["s2-0"].uuid and best.scores["context"] == best.scores["fused"]
    after = scores[turns["s2-1"].uuid]
    assert after["context"] == pytest.approx(after["fused"] + 0.5 * best.scores["fused"])
    two_after = scores[turns["s2-2"].uuid]
    assert two_after["context"] == pytest.approx(two_after["fused"] + 0.25 * best.scores["fused"])
    last_of_session_1 = scores[turns["s1-5"].uuid]  # just before it in the group, but a week earlier
    assert last_of_session_1["context"] == last_of_session_1["fused"]
    during = (T0 + timedelta(days=7), T0 + timedelta(days=8))
    windowed = await search(store, embedder, "morning weather", group_ids="g", config=cfg, during=during)
    assert windowed.episodes
    assert all(during[0] <= r.episode.reference_time < during[1] for r in windowed.episodes)
