"""The privacy bench's names set (``bench/robustness/privacy_names``) says where its names are: each gold span
is a seeded name (a speaker's, or a first name with or without a surname), every near miss a word of its
pools, none overlapping; a detector that finds exactly the gold scores 1.0, one that finds nothing 0."""

from __future__ import annotations

from itertools import pairwise

from bench.robustness import privacy as privacy_bench
from bench.robustness.privacy_names import FIRST, LAST, SPEAKERS, generate_named

FIRSTS = {n.casefold() for n in FIRST}
LASTS = {n.casefold() for n in LAST}


def test_the_gold_spans_are_the_seeded_names() -> None:
    messages = generate_named(200)
    assert generate_named(200) == messages  # a fixed seed
    for m in messages:
        for start, end, speaker in m.gold:
            words = m.text[start:end].casefold().split()
            if speaker:
                assert m.text[start:end] in SPEAKERS and m.text[end] == ":"
            else:
                assert words[0] in FIRSTS and all(w in LASTS for w in words[1:]), m.text[start:end]
        spans = sorted([(a, b) for a, b, _ in m.gold] + m.near)
        assert all(b <= c for (_, b), (c, _) in pairwise(spans))
    assert sum(1 for m in messages for *_, speaker in m.gold if not speaker) > 150


def test_a_perfect_tagger_scores_one_and_a_blind_one_zero() -> None:
    messages = generate_named(100)
    by_text = {m.text: m for m in messages}

    def perfect(text: str) -> list[tuple[str, int, int]]:
        return [("person", a, b) for a, b, _ in by_text[text].gold]

    metrics, _ = privacy_bench.score_names(perfect, messages)
    assert (metrics["names.recall"], metrics["names.speaker_recall"], metrics["names.precision"]) == (1, 1, 1)
    blind, missed = privacy_bench.score_names(lambda _: [], messages)
    assert (blind["names.recall"], blind["names.false_spans"]) == (0, 0) and missed
