"""``graph.entity_time``'s pure rules: names said as whole words, and what an entity is under a filter."""

from __future__ import annotations

from datetime import UTC, datetime

from epigraph.graph.entity_time import Mentioned, entity_as_of, mentions_passing, says, withheld_note
from epigraph.graph.model import Entity
from epigraph.graph.temporal import CURRENT, EVERYTHING, TimeFilter


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def test_a_name_is_said_as_a_whole_word_case_and_spacing_aside() -> None:
    assert says("Dana S.: I left Acme", "Dana S.") and says("in New\n York now", "new york")
    assert not says("Alice left", "Al") and not says("anything", "  ")


def test_an_entity_as_of_a_time_keeps_what_was_said_by_then() -> None:
    dana = Entity(group_id="g", name="Dana", aliases=["Dee"], summary="At Initech.", created_at=at(2023))
    said = [Mentioned(at(2023), at(2023), "Dana: hi"), Mentioned(at(2024), at(2024), "Dee: joined Initech")]
    for flt in (CURRENT, EVERYTHING, TimeFilter(as_of=at(2025))):
        assert entity_as_of(dana, said, flt) == dana
    then = entity_as_of(dana, said, TimeFilter(as_of=datetime(2023, 6, 1, tzinfo=UTC)))
    assert then is not None and then.aliases == [] and then.summary == ""
    assert then.summary_withheld == at(2024)
    assert "2024-01-01" in (withheld_note(then) or "")
    known = entity_as_of(dana, said, TimeFilter(known_at=datetime(2023, 6, 1, tzinfo=UTC)))
    assert known is not None and known.summary_withheld == at(2024)
    assert entity_as_of(dana, said, TimeFilter(as_of=at(2020))) is None
    assert entity_as_of(dana, said, TimeFilter(known_at=datetime(2022, 12, 31, tzinfo=UTC))) is None
    assert mentions_passing(said, TimeFilter(as_of=datetime(2023, 6, 1, tzinfo=UTC))) == 1
    assert "summary_withheld" not in then.model_dump()  # never stored, never dumped
