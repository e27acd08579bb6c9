"""The episodes topic's message format (epigraph.publish.envelope): round trip and refusals, no Kafka."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from epigraph.episodes.inputs import MAX_EPISODE_CHARS, EpisodeInput, parse_episode_lines
from epigraph.errors import InputError
from epigraph.graph.model import EpisodeKind, content_hash
from epigraph.publish.envelope import REDACTED, decode, encode, envelope, redacted

WHEN = datetime(2024, 5, 2, 10, 0, tzinfo=UTC)
CREATED = datetime(2026, 11, 25, 7, 0, 0, 123456, tzinfo=UTC)


def _value(**changes: object) -> bytes:
    data = json.loads(encode(envelope(EpisodeInput("I moved to Berlin.", WHEN, "alice"), CREATED)))
    for path, value in changes.items():
        target, *rest = path.split("__")
        if rest:
            data[target][rest[0]] = value
        else:
            data[target] = value
    return json.dumps(data).encode()


def test_an_envelope_round_trips_every_field() -> None:
    item = EpisodeInput(
        content="Moved to Lisbon \u2014 finally", reference_time=WHEN, group_id="team:a@b",
        kind=EpisodeKind.TEXT, speaker="Ann", name="note", source_description="export", episode_id="m-17",
    )  # fmt: skip
    sent = envelope(item, CREATED)
    back = decode(encode(sent))
    assert back == sent
    assert back.key == b"team:a@b"
    assert back.to_input() == item
    episode = back.to_episode()
    assert episode.uuid == sent.uuid == item.to_episode().uuid  # the id an ingestion here would store
    assert episode.created_at == CREATED
    assert (episode.group_id, episode.content, episode.kind) == ("team:a@b", item.content, EpisodeKind.TEXT)


def test_the_value_is_the_documented_json() -> None:
    line = '{"content": "hi", "reference_time": "2024-05-02T10:00:00Z", "speaker": "Bo"}'
    [item] = parse_episode_lines([line])
    assert isinstance(item, EpisodeInput)
    data = json.loads(encode(envelope(item, CREATED)))
    assert data == {
        "v": 1,
        "uuid": item.to_episode().uuid,
        "group": "default",
        "created_at": "2026-11-25T07:00:00.123456+00:00",
        "episode": {"content": "hi", "reference_time": "2024-05-02T10:00:00+00:00", "kind": "message",
                    "speaker": "Bo", "name": None, "source": None, "id": None},
    }  # fmt: skip
    assert decode(encode(envelope(item, CREATED))).to_episode().content == "Bo: hi"


@pytest.mark.parametrize(
    ("value", "field", "reason"),
    [
        (b"\xff", None, "not UTF-8"),
        (b"{", None, "not valid JSON"),
        (b"[1]", None, "expected a JSON object, got list"),
        (_value(v=3), "v", "unsupported envelope version 3"),
        (_value(v=2), "vault", "missing or empty"),  # a redacted episode names its vault
        (_value(v=2, vault="v1", uuid="a\x01b"), "uuid", "uuid"),
        (_value(group=None), "group", "missing or empty"),
        (_value(group="no spaces"), "group", "group_id must be"),
        (_value(episode=None), "episode", "missing or not an object"),
        (_value(episode__mood="happy"), "episode.mood", "unknown field"),
        (_value(episode__content=""), "episode.content", "missing or empty"),
        (_value(episode__content=7), "episode.content", "must be a string, got int"),
        (_value(episode__reference_time="yesterday"), "episode.reference_time", "not an ISO 8601 time"),
        (_value(episode__kind="poem"), "episode.kind", "must be one of message, text, json"),
        (_value(created_at=None), "created_at", "missing or empty"),
        (_value(uuid="forged"), "uuid", "'forged' is not the id of this episode"),
        (_value(episode__content="I moved to Paris."), "uuid", "is not the id of this episode"),
    ],
)
def test_a_malformed_message_is_refused_with_its_field(value: bytes, field: str | None, reason: str) -> None:
    with pytest.raises(InputError, match="malformed episode message") as raised:
        decode(value)
    assert raised.value.field == field
    assert reason in str(raised.value)


def test_an_empty_value_is_refused() -> None:
    with pytest.raises(InputError, match="empty value"):
        decode(None)


def test_a_redacted_episode_travels_as_version_2_under_the_id_of_what_was_given() -> None:
    given = EpisodeInput("call me at +44 20 7946 0958", WHEN, "alice", speaker="Dana", episode_id=None)
    sent = envelope(given, CREATED)
    as_stored = given.to_episode(created_at=CREATED).model_copy(
        update={"content": "Dana: call me at <PHONE_1>", "name": "Dana"}
    )
    data = json.loads(encode(redacted(sent, as_stored, "0123456789abcdef")))
    assert (data["v"], data["vault"], data["uuid"]) == (REDACTED, "0123456789abcdef", sent.uuid)
    assert data["episode"]["content"] == "Dana: call me at <PHONE_1>" and data["episode"]["speaker"] is None
    assert "7946" not in json.dumps(data)
    back = decode(json.dumps(data).encode())
    episode = back.to_episode()
    assert back.vault == "0123456789abcdef"
    assert (episode.uuid, episode.content, episode.name) == (sent.uuid, "Dana: call me at <PHONE_1>", "Dana")
    assert episode.content_hash == content_hash("Dana: call me at <PHONE_1>")  # as the door stores it


def test_a_message_over_the_episode_limit_is_refused() -> None:
    """The one limit of every door: a worker dead-letters such a message as a bad payload."""
    with pytest.raises(InputError) as refused:
        decode(_value(episode__content="a" * (MAX_EPISODE_CHARS + 1)))
    assert refused.value.field == "content"
    assert f"at most {MAX_EPISODE_CHARS} characters" in str(refused.value)
