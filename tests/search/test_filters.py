"""Time-travel semantics, filter validation and the keyword query (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from epigraph.errors import UsageError
from epigraph.graph.model import Entity, Episode, Fact
from epigraph.graph.temporal import TimeFilter, apply_contradiction, believed_interval, matches
from epigraph.search.filters import make_filters, valid_during
from epigraph.search.retrievers import keyword_query


def t(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def fact(text: str, valid: datetime | None, created: datetime, **kw: object) -> Fact:
    return Fact(
        group_id="g",
        source_uuid="a",
        target_uuid="b",
        relation="LIVES_IN",
        text=text,
        valid_at=valid,
        created_at=created,
        **kw,  # type: ignore[arg-type]
    )


def changed_twice() -> tuple[Fact, Fact, Fact]:
    """Paris (2020) -> Berlin (2021, learned 2021-02) -> Rome (2022, learned 2022-02)."""
    paris = fact("lives in Paris", t(2020), t(2020, 2))
    berlin = fact("lives in Berlin", t(2021), t(2021, 2))
    rome = fact("lives in Rome", t(2022), t(2022, 2))
    paris = apply_contradiction(paris, berlin, "ep-berlin", now=t(2021, 2))
    berlin = apply_contradiction(berlin, rome, "ep-rome", now=t(2022, 2))
    return paris, berlin, rome


NOW = t(2024)


def believed_valid(f: Fact, as_of: datetime, known_at: datetime) -> bool:
    """The stores' rule (graph.temporal.matches), through the TimeFilter a search hands them."""
    return matches(f, make_filters("g", as_of=as_of, known_at=known_at).store_time(), NOW)


@pytest.mark.parametrize(
    ("as_of", "expected"),
    [(t(2019), []), (t(2020, 6), ["paris"]), (t(2021, 6), ["berlin"]), (t(2023), ["rome"]), (NOW, ["rome"])],
)
def test_as_of_returns_what_was_true_then(as_of: datetime, expected: list[str]) -> None:
    facts = dict(zip(["paris", "berlin", "rome"], changed_twice(), strict=True))
    assert [name for name, f in facts.items() if believed_valid(f, as_of, NOW)] == expected


@pytest.mark.parametrize(
    ("known_at", "expected"),
    [(t(2020, 1), []), (t(2020, 6), ["paris"]), (t(2021, 6), ["berlin"]), (t(2022, 6), ["rome"])],
)
def test_known_at_returns_what_the_graph_believed(known_at: datetime, expected: list[str]) -> None:
    facts = dict(zip(["paris", "berlin", "rome"], changed_twice(), strict=True))
    assert [name for name, f in facts.items() if believed_valid(f, NOW, known_at)] == expected


def test_before_expiry_the_old_interval_was_believed() -> None:
    paris, _, _ = changed_twice()
    assert believed_interval(paris, t(2020, 6)) == (t(2020), None)
    assert believed_interval(paris, t(2021, 6)) == (t(2020), t(2021))
    assert believed_interval(paris, t(2020, 1)) is None  # not known yet


def test_expired_without_successor_is_a_retraction() -> None:
    retracted = fact("never true", t(2020), t(2020, 2), expired_at=t(2021))
    assert believed_valid(retracted, t(2020, 6), t(2020, 6))
    assert not believed_valid(retracted, t(2020, 6), NOW)


def test_valid_during() -> None:
    paris, berlin, _ = changed_twice()
    assert valid_during(paris, t(2020, 6), t(2020, 7))
    assert not valid_during(paris, t(2021), t(2022))
    assert valid_during(berlin, None, None)


def test_make_filters_normalizes_and_validates() -> None:
    f = make_filters("g1", as_of="2021-06-01", labels="Person", relations=["WORKS_AT"])
    assert f.group_ids == ("g1",) and f.as_of == datetime(2021, 6, 1, tzinfo=UTC)
    assert f.labels == ("Person",) and f.relations == ("WORKS_AT",)
    # time travel is the store's job: the filter goes down as it is
    assert f.store_time() == TimeFilter(as_of=datetime(2021, 6, 1, tzinfo=UTC))
    assert f.post_filters and not make_filters("g", as_of=t(2020), known_at=t(2021)).post_filters
    assert make_filters("g", during=(t(2020), None)).post_filters
    assert make_filters(["a", "b", "a"]).group_ids == ("a", "b")
    everything = make_filters("g", as_of=t(2020), include_retired=True)
    assert everything.store_time() == TimeFilter(include_retired=True)
    for bad in (
        {"group_ids": []},
        {"group_ids": "bad group"},
        {"group_ids": "g", "relations": ["works at"]},
        {"group_ids": "g", "labels": ["1bad"]},
        {"group_ids": "g", "as_of": "not a date"},
    ):
        with pytest.raises(UsageError):
            make_filters(**bad)  # type: ignore[arg-type]


def test_keep_helpers() -> None:
    f = make_filters("g", labels=["Person"], during=(t(2020), t(2021)))
    alice = Entity(group_id="g", name="Alice", labels=["Person"])
    acme = Entity(group_id="g", name="Acme", labels=["Company"])
    assert f.keep_entity(alice) and not f.keep_entity(acme)
    paris, berlin, _ = changed_twice()
    assert f.keep_fact(paris, (alice, acme))
    assert not f.keep_fact(paris, (acme, None))
    assert not f.keep_fact(berlin, (alice, acme))  # valid from 2021: outside [2020, 2021)
    inside = Episode(group_id="g", content="x", reference_time=t(2020, 5))
    outside = Episode(group_id="g", content="x", reference_time=t(2021, 5))
    assert f.keep_episode(inside) and not f.keep_episode(outside)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When did Caroline go to the LGBTQ support group?", "Caroline go LGBTQ support group"),
        ("What is Melanie's favourite book?", "Melanie favourite book"),
        ("what is it?", "what is it?"),  # only stopwords: keep the text
        ("", ""),
    ],
)
def test_keyword_query(question: str, expected: str) -> None:
    assert keyword_query(question) == expected
