"""The model's boundary validation (``epigraph.graph.model``): group ids, entity labels, fact relations
and datetimes are checked or normalized when a model is built, so nothing unsafe reaches a store.

Every rejection is a pydantic ``ValidationError`` located at the offending field, whose message states
the rule that was broken."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from epigraph.graph.model import Entity, Episode, Fact, Invalidation, Mention

MINIMAL: dict[type[BaseModel], dict[str, Any]] = {
    Episode: {"group_id": "g", "content": "hello", "reference_time": datetime(2024, 1, 1, tzinfo=UTC)},
    Entity: {"group_id": "g", "name": "Alice"},
    Fact: {"group_id": "g", "source_uuid": "a", "target_uuid": "b", "relation": "KNOWS", "text": "A knows B"},
    Mention: {"group_id": "g", "episode_uuid": "e", "entity_uuid": "a"},
    Invalidation: {"fact_uuid": "f", "episode_uuid": "e"},
}
GROUPED = [Episode, Entity, Fact, Mention]


def make(model: type[BaseModel], **changes: Any) -> Any:
    """A valid ``model`` with ``changes`` applied."""
    return model(**{**MINIMAL[model], **changes})


def rejected(model: type[BaseModel], loc: tuple[str | int, ...], **changes: Any) -> str:
    """Building ``model`` with ``changes`` fails at exactly ``loc``; returns the error's message."""
    with pytest.raises(ValidationError) as info:
        make(model, **changes)
    errors = info.value.errors()
    assert [e["loc"] for e in errors] == [loc]
    return str(errors[0]["msg"])


# --- group ids: 1-128 characters of [A-Za-z0-9_.:@-] -------------------------------------------------

BAD_GROUP_IDS = [
    "", " ", "a b", " g", "g ", "a\tb", "a/b", "a\\b", "a'b", 'a"b', "a`b", "a,b", "a*b", "a#b", "a%b",
    "a\x00b", "é", "grüppe", "a" * 129,
]  # fmt: skip


@pytest.mark.parametrize("model", GROUPED, ids=lambda m: m.__name__)
@pytest.mark.parametrize("group_id", BAD_GROUP_IDS)
def test_bad_group_ids_are_rejected(model: type[BaseModel], group_id: str) -> None:
    assert "group_id must be" in rejected(model, ("group_id",), group_id=group_id)


@pytest.mark.parametrize("model", GROUPED, ids=lambda m: m.__name__)
@pytest.mark.parametrize("group_id", ["g", "0", "a" * 128, "A-z_0.9:@x", "org:team.user@example.com"])
def test_good_group_ids_are_kept(model: type[BaseModel], group_id: str) -> None:
    assert make(model, group_id=group_id).group_id == group_id


# --- ids: 1-256 characters without control characters ---------------------------------------------------

ID_FIELDS = [
    (Episode, ("uuid",)), (Entity, ("uuid",)), (Fact, ("uuid",)), (Fact, ("source_uuid",)),
    (Fact, ("target_uuid",)), (Fact, ("episodes", 0)), (Mention, ("episode_uuid",)),
    (Mention, ("entity_uuid",)), (Invalidation, ("fact_uuid",)), (Invalidation, ("episode_uuid",)),
]  # fmt: skip
BAD_IDS = ["", "a\x00b", "line\nbreak", "tab\tbed", "\x7f", "a" * 257]


def _id_change(loc: tuple[str | int, ...], value: str) -> dict[str, Any]:
    return {loc[0]: [value] if len(loc) == 2 else value}


@pytest.mark.parametrize(
    ("model", "loc"), ID_FIELDS, ids=lambda x: x.__name__ if isinstance(x, type) else str(x)
)
@pytest.mark.parametrize("value", BAD_IDS, ids=repr)
def test_ids_without_text_or_with_control_characters_are_rejected(
    model: type[BaseModel], loc: tuple[str | int, ...], value: str
) -> None:
    assert "uuid must be" in rejected(model, loc, **_id_change(loc, value))


@pytest.mark.parametrize(
    ("model", "loc"), ID_FIELDS, ids=lambda x: x.__name__ if isinstance(x, type) else str(x)
)
@pytest.mark.parametrize("value", ["x", 'caller\'s id: "42" (v2) \\ *', "emoji 🎉", "a" * 256])
def test_any_printable_id_is_kept(model: type[BaseModel], loc: tuple[str | int, ...], value: str) -> None:
    kept = getattr(make(model, **_id_change(loc, value)), str(loc[0]))
    assert kept == ([value] if len(loc) == 2 else value)


# --- entity labels: identifiers [A-Za-z_][A-Za-z0-9_]*, at most 64 characters ---------------------------

BAD_LABELS = [
    "", "bad label", " Person", "Person ", "1abc", "9", "a-b", "A.B", "A`B", "A:B", "A)B", "`", "$x",
    "a\tb", "Ä", "Person{x}", "a" * 65,
]  # fmt: skip


@pytest.mark.parametrize("label", BAD_LABELS)
def test_labels_that_are_not_identifiers_are_rejected(label: str) -> None:
    message = rejected(Entity, ("labels", 1), labels=["Person", label])
    assert "label must be an identifier" in message


@pytest.mark.parametrize("label", ["Person", "_", "_private", "a1", "snake_Case_9", "A" * 64, "x" * 64])
def test_identifier_labels_are_kept(label: str) -> None:
    assert make(Entity, labels=[label, "Thing"]).labels == [label, "Thing"]


# --- fact relations: SCREAMING_SNAKE_CASE, at most 64 characters ---------------------------------------

BAD_RELATIONS = [
    "", "lives_in", "LivesIn", "Lives_In", "LIVES_in", "LIVES IN", "LIVES-IN", "LIVES.IN", "LIVES:IN",
    "LIVES`IN", "_X", "X_", "A__B", "_", "1A", "9", " LIVES_IN", "LIVES_IN ", "ÄB", "A" * 65,
    "A_" * 32 + "B",
]  # fmt: skip


@pytest.mark.parametrize("relation", BAD_RELATIONS)
def test_relations_not_in_screaming_snake_case_are_rejected(relation: str) -> None:
    assert "relation must be SCREAMING_SNAKE_CASE" in rejected(Fact, ("relation",), relation=relation)


@pytest.mark.parametrize("relation", ["LIVES_IN", "A1", "A", "A_1", "WORKS_AT_2024", "HAS_A_B", "A" * 64])
def test_screaming_snake_case_relations_are_kept(relation: str) -> None:
    assert make(Fact, relation=relation).relation == relation


@pytest.mark.parametrize(
    ("model", "loc", "changes"),
    [
        (Mention, ("group_id",), {"group_id": "g\n"}),
        (Entity, ("labels", 0), {"labels": ["Person\n"]}),
        (Fact, ("relation",), {"relation": "LIVES_IN\n"}),
    ],
    ids=["group_id", "label", "relation"],
)
def test_a_trailing_newline_is_rejected(
    model: type[BaseModel], loc: tuple[str | int, ...], changes: dict[str, Any]
) -> None:
    rejected(model, loc, **changes)


# --- datetimes: timezone-aware, in UTC; naive ones are read as UTC --------------------------------------

DATETIME_FIELDS = [
    (Episode, "reference_time"),
    (Episode, "created_at"),
    (Entity, "created_at"),
    (Fact, "valid_at"),
    (Fact, "invalid_at"),
    (Fact, "created_at"),
    (Fact, "expired_at"),
    (Invalidation, "previous_invalid_at"),
]
fields = pytest.mark.parametrize(
    ("model", "field"), DATETIME_FIELDS, ids=[f"{m.__name__}.{f}" for m, f in DATETIME_FIELDS]
)


@pytest.fixture
def local_zone_not_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local zone set to UTC-03:00, so that reading a naive datetime as local time would
    show (on a machine whose zone is UTC it would pass unnoticed)."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is Unix-only")
    monkeypatch.setenv("TZ", "EPI+03")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@fields
@pytest.mark.usefixtures("local_zone_not_utc")
def test_a_naive_datetime_is_read_as_utc(model: type[BaseModel], field: str) -> None:
    """Same wall-clock value, with UTC attached (not the machine's local zone)."""
    assert datetime(2024, 1, 1).astimezone().utcoffset() == timedelta(hours=-3)  # the fixture took effect
    value = getattr(make(model, **{field: datetime(2024, 3, 10, 2, 30, 15, 123456)}), field)
    assert value == datetime(2024, 3, 10, 2, 30, 15, 123456, tzinfo=UTC)
    assert value.tzinfo is UTC


@fields
@pytest.mark.parametrize("offset", [timedelta(hours=5, minutes=30), timedelta(hours=-8), timedelta(0)])
def test_an_aware_datetime_is_converted_to_utc(model: type[BaseModel], field: str, offset: timedelta) -> None:
    """Same instant, expressed in UTC (the wall clock moves by the offset)."""
    given = datetime(2024, 1, 1, 0, 15, tzinfo=timezone(offset))
    value = getattr(make(model, **{field: given}), field)
    assert value == given
    assert value.tzinfo is UTC
    assert value.replace(tzinfo=None) == datetime(2024, 1, 1, 0, 15) - offset


@fields
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-06T07:08:09", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)),
        ("2024-05-06", datetime(2024, 5, 6, tzinfo=UTC)),
        (" 2024-05-06T07:08:09Z ", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)),
        ("2024-05-06T07:08:09z", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)),
        ("2024-05-06T07:08:09+02:00", datetime(2024, 5, 6, 5, 8, 9, tzinfo=UTC)),
    ],
)
def test_iso_strings_are_parsed_to_utc(
    model: type[BaseModel], field: str, text: str, expected: datetime
) -> None:
    value = getattr(make(model, **{field: text}), field)
    assert (value, value.tzinfo) == (expected, UTC)


@fields
@pytest.mark.parametrize("text", ["", "yesterday", "2024-13-01", "2024-05-06T25:00", "05/06/2024"])
def test_unparseable_datetime_strings_are_rejected(model: type[BaseModel], field: str, text: str) -> None:
    rejected(model, (field,), **{field: text})


@pytest.mark.parametrize(
    ("model", "field"),
    [(Fact, "valid_at"), (Fact, "invalid_at"), (Fact, "expired_at"), (Invalidation, "previous_invalid_at")],
)
def test_optional_datetimes_stay_unset(model: type[BaseModel], field: str) -> None:
    assert getattr(make(model), field) is None
    assert getattr(make(model, **{field: None}), field) is None


@pytest.mark.parametrize(
    ("model", "field"), [(Episode, "created_at"), (Entity, "created_at"), (Fact, "created_at")]
)
def test_default_creation_times_are_utc(model: type[BaseModel], field: str) -> None:
    assert getattr(make(model), field).tzinfo is UTC


@pytest.mark.parametrize("value", [date(2024, 1, 1), b"2024-01-01T00:00:00"], ids=["date", "bytes"])
def test_no_input_yields_a_naive_datetime(value: object) -> None:
    try:
        fact = make(Fact, valid_at=value)
    except ValidationError:
        return  # rejecting the value is as good as reading it as UTC
    assert fact.valid_at.tzinfo is not None


# --- the other checks: required text, enums, embeddings, no extra fields, frozen ---------------------------


@pytest.mark.parametrize(
    ("model", "field"), [(Entity, "name"), (Fact, "text")], ids=["Entity.name", "Fact.text"]
)
def test_empty_names_and_fact_texts_are_rejected(model: type[BaseModel], field: str) -> None:
    rejected(model, (field,), **{field: ""})


@pytest.mark.parametrize(("field", "value"), [("status", "bogus"), ("kind", "email"), ("status", "DONE")])
def test_episode_status_and_kind_must_be_known(field: str, value: str) -> None:
    rejected(Episode, (field,), **{field: value})


def test_episode_status_and_kind_accept_their_values() -> None:
    episode = make(Episode, status="failed", kind="json")
    assert (episode.status, episode.kind) == ("failed", "json")


@pytest.mark.parametrize(
    ("model", "field"),
    [(Fact, "text_embedding"), (Entity, "name_embedding"), (Episode, "content_embedding")],
)
def test_embeddings_must_be_numbers(model: type[BaseModel], field: str) -> None:
    rejected(model, (field, 1), **{field: [0.5, "high", 0.25]})
    assert getattr(make(model, **{field: [1, 0.5]}), field) == [1.0, 0.5]


@pytest.mark.parametrize("model", list(MINIMAL), ids=lambda m: m.__name__)
def test_unknown_fields_are_rejected(model: type[BaseModel]) -> None:
    rejected(model, ("grup_id",), grup_id="g")


@pytest.mark.parametrize("model", GROUPED, ids=lambda m: m.__name__)
def test_models_are_frozen(model: type[BaseModel]) -> None:
    """Assignment would skip validation: it is refused (``model_copy(update=...)`` makes a new one)."""
    item = make(model)
    with pytest.raises(ValidationError):
        item.group_id = "bad group"
    assert item.group_id == "g"


# --- a fact's event-time interval: invalid_at is not before valid_at --------------------------------------

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("valid_at", "invalid_at"),
    [
        (T0, T0 - timedelta(microseconds=1)),
        (T0, T0 - timedelta(days=400)),
        # the same instants in other zones compare after normalization: 12:00 UTC ends at 11:30 UTC
        ("2024-03-01T14:00:00+02:00", "2024-03-01T11:30:00Z"),
        ("2024-03-01T12:00:00", datetime(2024, 3, 1, 7, 0, tzinfo=timezone(timedelta(hours=-4)))),
    ],
)
def test_an_interval_that_ends_before_it_starts_is_rejected(valid_at: Any, invalid_at: Any) -> None:
    with pytest.raises(ValidationError) as info:
        make(Fact, uuid="f-1", valid_at=valid_at, invalid_at=invalid_at)
    message = str(info.value.errors()[0]["msg"])
    assert "'f-1'" in message and "invalid_at" in message and "before valid_at" in message


@pytest.mark.parametrize(
    ("valid_at", "invalid_at"),
    [
        (T0, T0),  # empty: retired the moment it began
        (T0, T0 + timedelta(microseconds=1)),
        (None, T0),
        (T0, None),
        (None, None),
        ("2024-03-01T14:00:00+02:00", "2024-03-01T12:00:00Z"),  # the same instant
    ],
)
def test_an_ordered_or_open_interval_is_kept(valid_at: Any, invalid_at: Any) -> None:
    fact = make(Fact, valid_at=valid_at, invalid_at=invalid_at)
    if fact.valid_at is not None and fact.invalid_at is not None:
        assert fact.invalid_at >= fact.valid_at
    assert (fact.valid_at is None) == (valid_at is None)
    assert (fact.invalid_at is None) == (invalid_at is None)
